"""vlkng: a persistent spatiotemporal knowledge-graph memory for ROS 2 robots (VL-KnG).

`vlkng_ros.core` is the pure core (no rclpy); `vlkng_ros.nodes` are thin ROS 2 wrappers.
"""

__version__ = "0.1.0"
