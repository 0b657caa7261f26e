"""Ship the fixture sources (fixtures/) inside the wheel as weaklink/_fixtures, so that
`weaklink demo` works from an installed package; the checkout keeps one copy, in fixtures/."""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithFixtures(build_py):
    def run(self):
        super().run()
        source = Path(__file__).resolve().parent / "fixtures"
        target = Path(self.build_lib) / "weaklink" / "_fixtures"
        if source.is_dir():
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildPyWithFixtures})
