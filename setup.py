"""vlkng_ros: the ament_python package at the repository root (pure core + ROS 2 nodes)."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "vlkng_ros"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    package_data={f"{PACKAGE}.web": ["static/*"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="vlkng maintainers",
    maintainer_email="maintainers@vlkng.dev",
    description="Persistent spatiotemporal knowledge-graph memory for ROS 2 robots (VL-KnG).",
    license="Apache-2.0",
    python_requires=">=3.10",
    entry_points={
        "console_scripts": [
            "vlkng = vlkng_ros.cli:main",
            "vlkng_suite = vlkng_ros.nodes.suite:main",
            "vlkng_capture = vlkng_ros.nodes.capture:main",
            "vlkng_chunk_builder = vlkng_ros.nodes.chunk_builder:main",
            "vlkng_merger = vlkng_ros.nodes.merger:main",
            "vlkng_ask_server = vlkng_ros.nodes.ask_server:main",
            "vlkng_navigator = vlkng_ros.nodes.navigator:main",
            "vlkng_web = vlkng_ros.nodes.web:main",
            "vlkng_speech = vlkng_ros.nodes.speech:main",
        ],
    },
)
