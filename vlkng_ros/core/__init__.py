"""Pure core of vlkng: nothing under this package imports rclpy or any ROS message type."""
