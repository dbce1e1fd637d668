"""A RealSense-like depth sensor on top of the renderer's ideal depth.

What a D435-class stereo camera does to depth, roughly as its datasheet and users report it:

- range noise growing with the square of the range (stereo: sigma_z = z^2 * subpixel / (f * B)),
  spatially correlated (a disparity error moves a patch, not single pixels) plus a little
  per-pixel noise; quantised to 1 mm in 16UC1;
- no reading: beyond the sensor's range, nearer than its minimum, at random speckles, and in a
  band beside depth edges (the stereo "shadow": the background one camera sees and the other does
  not, on the left of near objects for a left-referenced depth);
- "flying pixels" between the two surfaces along depth edges.
"""

from __future__ import annotations

import cv2
import numpy as np

from vlkng_ros.core.depth import DepthNoise

NOISE = DepthNoise()  # the same model the pipeline assumes: base 3 mm + 0.006 z^2
SPECKLE_RATE = 0.02  # random no-reading pixels
SHADOW_PX = 4  # width of the stereo shadow beside a depth edge (pixels at 640 wide)
SHADOW_RATE = 0.7  # share of the shadow band with no reading
FLYING_RATE = 0.5  # share of edge pixels that read between the surfaces
EDGE_JUMP_M = 0.15


def realsense_depth(ideal: np.ndarray, rng: np.random.Generator, noise: DepthNoise = NOISE) -> np.ndarray:
    """Ideal optical depth (float m) -> what the camera publishes: uint16 millimetres, 0 = none."""
    h, w = ideal.shape
    z = ideal.astype(np.float32).copy()
    sigma = noise.sigma(z).astype(np.float32)
    coarse = rng.standard_normal((max(2, h // 16), max(2, w // 16))).astype(np.float32)
    correlated = cv2.resize(coarse, (w, h), interpolation=cv2.INTER_LINEAR)
    fine = rng.standard_normal((h, w)).astype(np.float32)
    z += sigma * (0.9 * correlated + 0.45 * fine)
    # edges: where the ideal depth jumps between horizontal neighbours
    jump = np.zeros((h, w), dtype=bool)
    step = np.abs(np.diff(ideal, axis=1)) > EDGE_JUMP_M + 0.05 * ideal[:, 1:]
    jump[:, 1:] |= step
    jump[:, :-1] |= step
    # flying pixels: some edge pixels read a mix of the two surfaces
    flying = jump & (rng.random((h, w)) < FLYING_RATE)
    left = np.roll(ideal, 1, axis=1)
    right = np.roll(ideal, -1, axis=1)
    mix = rng.random((h, w)).astype(np.float32)
    z = np.where(flying, mix * left + (1 - mix) * right, z)
    # the stereo shadow: a band left of each near-to-far edge (the nearer surface on the right)
    near_right = np.zeros((h, w), dtype=bool)
    near_right[:, :-1] = ideal[:, 1:] < ideal[:, :-1] - (EDGE_JUMP_M + 0.05 * ideal[:, :-1])
    shadow = cv2.dilate(near_right.astype(np.uint8), np.ones((1, SHADOW_PX), np.uint8),
                        anchor=(SHADOW_PX - 1, 0)).astype(bool)
    none = (shadow & (rng.random((h, w)) < SHADOW_RATE)) | (rng.random((h, w)) < SPECKLE_RATE)
    none |= (ideal < noise.min_m) | (ideal > noise.max_m) | ~np.isfinite(ideal)
    mm = np.rint(np.clip(z, 0.0, 65.0) * 1000.0).astype(np.uint16)
    mm[none] = 0
    return mm
