"""ROS 2 nodes of vlkng (thin wrappers over vlkng_ros.core). ``intent`` is pure Python."""
