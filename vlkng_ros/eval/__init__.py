"""The evaluation harness, apart from the product: the tour simulator (``sim``), synthetic
memories for budget tests (``synthetic``), association and retrieval metrics, and the eval
runner behind ``vlkng eval``. Nothing in ``vlkng_ros.core`` or ``vlkng_ros.nodes`` imports it."""
