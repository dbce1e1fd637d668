"""`vlkng sim`: write a synthetic tour (tour-format v2) from seeds."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sim", help="generate a synthetic tour (bag, annotations, questions, world) from seeds",
        description="Generate a synthetic home/office tour in tour-format v2: a seeded floor plan with "
                    "furniture and small objects, a robot walking room to room, rendered JPEG frames on "
                    "/camera/image_raw/compressed, SLAM-like /pose (map frame, ~4 Hz), "
                    "/camera/camera_info, per-frame annotations, benchmark questions of every type and "
                    "world.json. Same arguments give the same annotations, questions and world.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--out", required=True, help="tour folder to write (must be empty or absent, see --force)")
    p.add_argument("--minutes", type=float, default=3.0, help="length of the walk in minutes")
    p.add_argument("--seed", type=int, default=0, help="seed of the walk, rendering noise and questions")
    p.add_argument("--world-seed", type=int, default=None,
                   help="seed of the floor plan and objects (default: --seed); tours with the same "
                        "world seed walk through the same home")
    p.add_argument("--move-objects", type=int, default=0, metavar="N",
                   help="move N small objects away from where the base world of --world-seed has them "
                        "(a second tour of the same home that finds things moved)")
    p.add_argument("--fps", type=float, default=5.0, help="camera frame rate (Hz)")
    p.add_argument("--width", type=int, default=640, help="image width (pixels)")
    p.add_argument("--height", type=int, default=480, help="image height (pixels)")
    p.add_argument("--depth", action="store_true",
                   help="also write aligned depth (16UC1 mm on /camera/aligned_depth_to_color/image_raw, "
                        "RealSense-like noise and dropouts); about 0.3-0.6 MB more per frame")
    p.add_argument("--varied", action="store_true",
                   help="generalisation worlds: other floor plans and room kinds, object classes and words "
                        "the default worlds never use, more question phrasings, per-world object sizes, 2-6 "
                        "chairs per table, small things in ones to threes (default: the worlds the tuned "
                        "numbers were measured on)")
    p.add_argument("--camera-offset", type=float, nargs=2, default=(0.0, 0.0), metavar=("X", "Y"),
                   help="camera mounting from the robot's centre (m forward, m left); /tf_static carries "
                        "it, /pose and /odom give the robot's centre")
    p.add_argument("--camera-height", type=float, default=1.0, metavar="M",
                   help="camera height above the floor (m, 0.1-2.5); /tf_static carries it")
    p.add_argument("--hfov", type=float, default=90.0, metavar="DEG",
                   help="camera's horizontal field of view (degrees, 30-120); /camera/camera_info carries it "
                        "(e.g. --camera-height 0.3 --hfov 69: a RealSense D435 low on a small base)")
    p.add_argument("--depth-noise", type=float, default=1.0, metavar="X",
                   help="with --depth: range noise X times the model the pipeline assumes by default (0.1-10; "
                        "e.g. 2.5: a camera with a shorter stereo baseline that nobody configured for)")
    p.add_argument("--pose-error", type=float, default=1.0, metavar="X",
                   help="SLAM-like error of /pose (drift 3 cm / 0.6 deg, jitter 8 mm / 0.17 deg) times X (0-10; "
                        "e.g. 3: a SLAM that keeps the robot less surely)")
    p.add_argument("--force", action="store_true", help="replace the tour files in --out if they exist")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from vlkng_ros.eval.sim import generate_tour

    s = generate_tour(args.out, minutes=args.minutes, seed=args.seed, world_seed=args.world_seed,
                      fps=args.fps, width=args.width, height=args.height, move_objects=args.move_objects,
                      log_progress=True, overwrite=args.force,
                      depth=args.depth, camera_offset=tuple(args.camera_offset), varied=args.varied,
                      camera_height_m=args.camera_height, hfov_deg=args.hfov, depth_noise=args.depth_noise,
                      pose_error=args.pose_error)
    if args.json:
        print(json.dumps({"out": str(s.out_dir), "frames": s.frames, "poses": s.poses, "objects": s.objects,
                          "moved": s.moved, "rooms": s.rooms, "annotated_boxes": s.annotated_boxes,
                          "questions": s.questions, "questions_by_type": s.questions_by_type,
                          "bytes": s.bytes_on_disk, "seconds": round(s.seconds, 2)}))
        return 0
    print(f"tour written to {s.out_dir}")
    print(f"  frames     {s.frames} ({s.duration_s / 60:.1f} min at {args.fps:g} fps), poses {s.poses}")
    print(f"  rooms      {', '.join(s.rooms)}")
    print(f"  objects    {s.objects} ({s.annotated_boxes} annotated boxes)"
          + (f", moved: {', '.join(s.moved)}" if s.moved else ""))
    print(f"  questions  {s.questions}: " + ", ".join(f"{k} {v}" for k, v in s.questions_by_type.items()))
    print(f"  on disk    {s.bytes_on_disk / 1e6:.1f} MB, generated in {s.seconds:.1f} s")
    return 0
