"""vlkng_ros: the ament_python package at the repository root (pure core + ROS 2 nodes)."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "vlkng_ros"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="vlkng maintainers",
    maintainer_email="maintainers@vlkng.dev",
    description="Persistent spatiotemporal knowledge-graph memory for ROS 2 robots (VL-KnG).",
    license="Apache-2.0",
    python_requires=">=3.10",
    entry_points={
        "console_scripts": [
            "vlkng = vlkng_ros.cli:main",
        ],
    },
)
