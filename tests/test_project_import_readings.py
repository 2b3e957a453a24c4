"""APIs reached through another module of the project (semantics/project_imports.py).

Modelled on kesavanramakrishnan/flash-hog, flash_hog/jax/_attention_impl.py (imports JAX's
private cuDNN attention as ``cuda_dot_product_attention``) and flash_hog/jax/attention.py
(``import flash_hog.jax._attention_impl as attn_impl``, then
``attn_impl.cuda_dot_product_attention(...)``), and on the ``try``/``except ImportError``
shims and ``__init__.py`` re-exports of small research packages. The project is not
installed in the interpreter jedi asks, so only the project's own files tell what the names
are. Real jedi in the test interpreter, the real engine; the code is written for this suite.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import CheckFn, found_lines, marked_lines

IMPL = """\
try:
    from jax._src.cudnn.fused_attention_stablehlo import dot_product_attention as cuda_dot_product_attention
except ImportError:
    cuda_dot_product_attention = None
from jax.numpy.linalg import eigvals as spectrum_of
from jax.numpy.linalg import eig as decompose
from jax.numpy.linalg import svd as singular
from jax.numpy.linalg import eigh as wrapped_eigh


def decompose(x):
    return x


singular = None if False else singular.__wrapped__
"""

INIT = "from ._impl import spectrum_of as spectrum\n"

#: found on cpu: the cuDNN attention (cuda only); on tpu: that and eigvals (cpu and GPUs)
APP = """\
import mypkg._impl as attn_impl
import mypkg._impl
import mypkg
from mypkg._impl import spectrum_of
from mypkg import _impl
from ._impl import spectrum_of as eigenvalues
from ._impl import *


def attention(q, k, v):
    return attn_impl.cuda_dot_product_attention(q, k, v, scale=1.0)  # found


def spectra(x):
    a = spectrum_of(x)  # found on tpu
    b = mypkg._impl.spectrum_of(x)  # found on tpu
    c = _impl.spectrum_of(x)  # found on tpu
    d = eigenvalues(x)  # found on tpu
    e = mypkg.spectrum(x)  # found on tpu
    f = wrapped_eigh(x)
    return a, b, c, d, e, f


def own(x):
    # the module defines decompose itself, and binds singular by an assignment too
    return attn_impl.decompose(x), attn_impl.singular(x)
"""


def _project(tmp_path: Path) -> str:
    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(INIT)
    (pkg / "_impl.py").write_text(IMPL)
    return str(pkg / "app.py")


@pytest.mark.parametrize("target", ["cpu", "tpu"])
def test_apis_imported_under_other_names_in_another_module_are_found(
    check: CheckFn, tmp_path: Path, target: str
) -> None:
    """Each form of import of the project module (plain, aliased, from-import of the module
    or of the name, relative, star, a package's re-export) reaches the API; a name the module
    defines or assigns itself does not."""
    path = _project(tmp_path)
    assert found_lines(check, APP, target, path) == marked_lines(APP, target)


def test_without_the_project_module_nothing_is_found(check: CheckFn, tmp_path: Path) -> None:
    """The same file without its project beside it: the names mean nothing known."""
    (tmp_path / "alone").mkdir()
    assert found_lines(check, APP, "tpu", str(tmp_path / "alone" / "app.py")) == []


def test_a_module_of_jax_is_left_to_the_resolver(check: CheckFn, tmp_path: Path) -> None:
    """A project that is a jax checkout: its own modules are what jedi reads for jax names,
    and a name the module rebinds is no API (``jax.numpy`` defining its own ``roots``)."""
    jax_pkg = tmp_path / "jax"
    jax_pkg.mkdir()
    (jax_pkg / "__init__.py").write_text("")
    (jax_pkg / "helpers.py").write_text("from jax.numpy.linalg import eigvals as values\n")
    source = "import jax.helpers as h\n\n\ndef f(x):\n    return h.values(x)\n"
    # asked of jedi, which answers from the installed jax (that has no `jax.helpers`)
    assert found_lines(check, source, "tpu", str(tmp_path / "app.py")) == []


def test_a_chain_of_project_modules_is_followed_three_deep_and_no_further(
    check: CheckFn, tmp_path: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "deep"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "m1.py").write_text("from jax.numpy.linalg import eigvals as ev1\n")
    for n in range(2, 6):
        (pkg / f"m{n}.py").write_text(f"from .m{n - 1} import ev1\n")
    source = "".join(f"from deep.m{n} import ev1 as e{n}\n" for n in range(1, 6)) + "\n\ndef f(x):\n"
    source += "".join(f"    e{n}(x)\n" for n in range(1, 6))
    first = source.count("\n") - 4
    # through m1 alone, m2 then m1, m3 then m2 then m1; m4 would take a fourth module
    assert found_lines(check, source, "tpu", str(tmp_path / "app.py")) == [first, first + 1, first + 2]


#: modelled on benvial/nannos nannos/__init__.py, which binds its array library by configuration
CHOSEN = """\
import os

if os.environ.get("MYPKG_BACKEND") == "jax":
    from jax.numpy.linalg import eigvals as values
else:
    from numpy.linalg import eigvals as values
"""


def test_a_name_bound_to_jax_or_another_library_by_configuration_is_not_visibly_jax(
    check: CheckFn, tmp_path: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "chosen").mkdir()
    (tmp_path / "chosen" / "__init__.py").write_text("")
    (tmp_path / "chosen" / "backend.py").write_text(CHOSEN)
    source = "from chosen import backend\n\n\ndef f(x):\n    return backend.values(x)\n"
    path = str(tmp_path / "chosen" / "layers.py")
    assert found_lines(check, source, "tpu", path) == []
    # jax's alone: found
    (tmp_path / "chosen" / "backend.py").write_text("from jax.numpy.linalg import eigvals as values\n")
    assert found_lines(check, source, "tpu", path) == [5]


#: modelled on agonzago/test_stationary bvar_jax/estimate_var_ss.py, a script that imports
#: its smoother from run_single_draw.py beside it, which pins the process to the cpu as it
#: is imported (`jax.config.update("jax_platform_name", "cpu")`)
SMOOTHER = 'import jax\n\njax.config.update("jax_platform_name", "cpu")\n\n\ndef smooth(x):\n    return x\n'
SCRIPT = """\
import jax.numpy as jnp
from {module} import smooth


def lazy():
    from run_single_draw import smooth


print(jnp.linalg.eigvals(smooth(jnp.eye(3))))
"""


@pytest.mark.parametrize(
    ("module", "found"),
    [
        ("run_single_draw", []),  # pinned as the script imports it
        ("plain_helpers", [9]),  # a helper that pins nothing; the function's import runs later
    ],
)
def test_a_project_module_that_pins_the_platform_as_it_is_imported_pins_the_importer(
    check: CheckFn, tmp_path: Path, module: str, found: list[int]
) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    scripts = tmp_path / "bvar"
    scripts.mkdir()
    (scripts / "__init__.py").write_text("")
    (scripts / "run_single_draw.py").write_text(SMOOTHER)
    (scripts / "plain_helpers.py").write_text(SMOOTHER.replace("jax.config.update", "print"))
    source = SCRIPT.format(module=module)
    assert found_lines(check, source, "tpu", str(scripts / "estimate.py")) == found


#: modelled on corentinravoux/flip flip/covariance/likelihood.py, whose array library is jax
#: or numpy by `if __use_jax__:` (imported from flip/_config.py, which sets it to True) and,
#: under it, by whether jax imports
LIKELIHOOD = """\
from ._config import {flag}

if {test}:
    try:
        import jax.numpy as jnp
    except ImportError:
        import numpy as jnp
else:
    import numpy as jnp


def regularized(c):
    return jnp.linalg.eig(c)
"""


@pytest.mark.parametrize(
    ("config", "test", "found"),
    [
        ("__use_jax__ = True\n", "__use_jax__", [13]),
        ("__use_jax__ = False\n", "__use_jax__", []),
        ("__use_jax__ = True\n", "not __use_jax__", []),
        ("__use_jax__: bool = True\n", "__use_jax__", [13]),
        # set twice, or by the environment: chosen at run time, not visibly jax
        (
            "import os\n__use_jax__ = True\nif os.environ.get('NO_JAX'):\n    __use_jax__ = False\n",
            "__use_jax__",
            [],
        ),
        ("import os\n__use_jax__ = os.environ.get('USE_JAX') == '1'\n", "__use_jax__", []),
        # a function of the module may turn it off (`set_backend("numpy")`)
        (
            "__use_jax__ = True\n\n\ndef no_jax():\n    global __use_jax__\n    __use_jax__ = False\n",
            "__use_jax__",
            [],
        ),
    ],
)
def test_a_library_chosen_by_a_constant_flag_of_another_module_is_the_one_it_names(
    check: CheckFn, tmp_path: Path, config: str, test: str, found: list[int]
) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "flip").mkdir()
    (tmp_path / "flip" / "__init__.py").write_text("")
    (tmp_path / "flip" / "_config.py").write_text(config)
    source = LIKELIHOOD.format(flag="__use_jax__", test=test)
    assert found_lines(check, source, "tpu", str(tmp_path / "flip" / "likelihood.py")) == found


def test_a_constant_flag_of_the_module_itself_chooses_too(check: CheckFn) -> None:
    source = LIKELIHOOD.replace("from ._config import {flag}\n", "USE_JAX = True\n").format(test="USE_JAX")
    assert found_lines(check, source, "tpu") == [13]
    assert found_lines(check, source.replace("USE_JAX = True", "USE_JAX = False"), "tpu") == []


#: modelled on Mauropieroni/fastPTA tests/test_Fisher_code.py, which imports fastPTA/utils.py,
#: where `which_device = "cpu"` names the device `jax.config.update("jax_default_device",
#: jax.devices(which_device)[0])` sets as the module is imported
DEVICE_UTILS = 'import jax\n\nwhich_device = "{platform}"\njax.config.update("jax_default_device", jax.devices(which_device)[0])\n'
FISHER_TEST = """\
import jax.numpy as jnp

import fastpta.utils as ut


def test_eigenvalues():
    assert jnp.linalg.eigvals(jnp.eye(2)).shape == (2,)
"""


@pytest.mark.parametrize(("platform", "found"), [("cpu", []), ("tpu", [7])])
def test_a_device_a_project_module_names_through_a_constant_pins_the_importer(
    check: CheckFn, tmp_path: Path, platform: str, found: list[int]
) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "fastpta").mkdir()
    (tmp_path / "fastpta" / "__init__.py").write_text("")
    (tmp_path / "fastpta" / "utils.py").write_text(DEVICE_UTILS.format(platform=platform))
    (tmp_path / "tests").mkdir()
    assert found_lines(check, FISHER_TEST, "tpu", str(tmp_path / "tests" / "test_fisher.py")) == found


#: modelled on RCAIDE/RNUMPY RNUMPY/__init__.py, which imports jax in a `try` (None when it
#: is missing) and hands it out as `jax_handle = jax`, and RNUMPY/linalg/src.py, which takes
#: `j = rp.jax_handle; jnp = j.numpy; jl = jnp.linalg` and calls `jl.eig(a)`
HANDLES = """\
try:
    import jax
except ImportError:
    jax = None

jax_handle = jax
linalg_handle = jax.numpy.linalg
{extra}
"""
HANDLE_USER = """\
import rnum as rp
from . import rnum as B

j = rp.jax_handle
jnp = j.numpy
jl = jnp.linalg
lh = B.linalg_handle


def eig(a):
    return jl.eig(a)


def eigvals(a):
    return lh.eigvals(a)


def direct(a):
    return rp.jax_handle.numpy.linalg.eig(a), rp.linalg_handle.eigvals(a)
"""


@pytest.mark.parametrize(
    ("extra", "found"),
    [
        ("", [11, 15, 19, 19]),
        # the handle rebound elsewhere in the module (`set_backend` style): it is no longer
        # visibly jax; the one bound once still is
        ("\ndef use_numpy():\n    global jax_handle\n    import numpy\n    jax_handle = numpy\n", [15, 19]),
        ("\nif jax is None:\n    import numpy as linalg_handle\n", [11, 19]),
        # a function or class of the same name, defined after the assignment, is what it names
        ("\n\ndef jax_handle():\n    return None\n", [15, 19]),
    ],
)
def test_a_backend_handle_another_module_binds_to_jax_is_followed(
    check: CheckFn, tmp_path: Path, extra: str, found: list[int]
) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "rnum").mkdir()
    (tmp_path / "rnum" / "__init__.py").write_text(HANDLES.format(extra=extra))
    path = str(tmp_path / "rnum_linalg.py")
    assert found_lines(check, HANDLE_USER, "tpu", path) == found
    # eig and eigvals lower on cpu
    assert found_lines(check, HANDLE_USER, "cpu", path) == []


def test_a_handle_to_another_library_is_not_jax(check: CheckFn, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "rnum").mkdir()
    (tmp_path / "rnum" / "__init__.py").write_text(
        "import numpy as np\nimport jax\n\njax_handle = np\nlinalg_handle = np.linalg\n"
    )
    assert found_lines(check, HANDLE_USER, "tpu", str(tmp_path / "rnum_linalg.py")) == []
