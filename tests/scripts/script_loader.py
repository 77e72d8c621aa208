"""Scripts under scripts/ are not a package: tests load them by path."""
import importlib.util
import sys

from models.config import REPO_ROOT


def load_script(name: str):
    """The module of scripts/<name>.py, registered in sys.modules (dataclasses look their module up)."""
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
