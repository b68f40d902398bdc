"""Where a tape was recorded: the interpreter, numpy, the BLAS library and the kernel it picked, the
CPU and its SIMD flags, the OS. Bit for bit is a promise of one interpreter on one machine; the
same float expression may round its last bit differently under another Python/numpy era, another
CPU or another BLAS kernel (OpenBLAS picks one at run time from the CPU, or from
``OPENBLAS_CORETYPE``: on one AVX-512 machine its SkylakeX, Haswell and Prescott kernels gave three
different ``np.linalg.norm``s of the same arrays; docs/conformance.md). So a tape carries
:func:`describe` of the machine that made it, and a replay compares it with this one
(:func:`differences`): the same platform must agree bit for bit, another one within the env's
declared ulps (:mod:`bridge.conformance.across`), and a verdict names what differs.

The BLAS kernel is asked of the OpenBLAS library numpy loaded (its ``openblas_get_config()``, found
through ``/proc/self/maps`` and called with ctypes, as threadpoolctl does); where that is not
possible (another BLAS, another OS) numpy's build configuration names the library and the kernel is
"unknown". ``blas_source`` says which was used.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
from typing import Dict, List, Optional, Tuple

import numpy as np

__all__ = ["describe", "differences", "era_stamp", "engine_of", "FIELDS", "ENGINE"]

# field -> how a difference in it is worded: (recorded, replayed); blas_source is how, not where
FIELDS = ("python", "numpy", "blas", "blas_kernel", "cpu", "simd", "os", "engine")
# what runs an env's step unless the env names another (``env.unwrapped.engine``: an rlFunctionEnv
# of .m functions says "GNU Octave 7.3.0", whose libm and BLAS are not numpy's); tapes made before
# engines were recorded ran in Python
ENGINE = "Python"
_SIMD_PREFIXES = ("sse", "ssse", "avx", "fma", "f16c", "amx", "asimd", "neon", "sve", "vsx", "altivec")
_CONFIG_SYMBOLS = ("openblas_get_config", "openblas_get_config64_", "scipy_openblas_get_config64_")
_CORE_SYMBOLS = ("openblas_get_corename", "openblas_get_corename64_", "scipy_openblas_get_corename64_")

_described: Optional[Dict[str, str]] = None


def engine_of(env: object) -> str:
    """What runs ``env``'s step: its ``unwrapped.engine`` when it names one, else :data:`ENGINE`."""
    engine = getattr(getattr(env, "unwrapped", env), "engine", None)
    return engine if isinstance(engine, str) and engine else ENGINE


def describe(env: object = None) -> Dict[str, str]:
    """This interpreter and machine, as short strings, with the engine that runs ``env``'s step."""
    found = _machine()
    found["engine"] = engine_of(env)
    return found


def _machine() -> Dict[str, str]:
    """This interpreter and machine (computed once per process)."""
    global _described
    if _described is None:
        blas, kernel, source = _blas()
        libc = " ".join(part for part in platform.libc_ver() if part)
        _described = {
            "python": f"{platform.python_version()} {platform.python_implementation()}",
            "numpy": np.__version__,
            "blas": blas,
            "blas_kernel": kernel,
            "blas_source": source,
            "cpu": _cpu_model(),
            "simd": " ".join(_simd_flags()),
            "os": " ".join(p for p in (platform.system(), platform.machine(), libc) if p),  # libm is glibc's
        }
    return dict(_described)


def era_stamp() -> str:
    """This interpreter's era as a tape name: ``py<major><minor>-numpy<major>``."""
    return f"py{sys.version_info[0]}{sys.version_info[1]}-numpy{np.__version__.split('.')[0]}"


def differences(recorded: Optional[Dict[str, str]], here: Dict[str, str]) -> List[str]:
    """What differs between the platform a tape was ``recorded`` on and ``here``, in words
    (``[]``: the same platform, so the replay must be bit for bit). A tape that does not say where
    it was recorded (made before envbridge recorded it) is from an unknown platform."""
    if recorded is None:
        return ["recorded on a platform the tape does not name (it predates platform records)"]
    found = []
    for field in FIELDS:
        default = ENGINE if field == "engine" else "unknown"
        theirs, mine = recorded.get(field, default), here.get(field, default)
        if theirs == mine:
            continue
        if field == "engine":
            found.append(f"the env's step ran in {theirs} where recorded, in {mine} here")
        elif field == "blas_kernel":
            found.append(f"recorded with the {theirs} BLAS kernel, replayed with {mine}")
        elif field == "simd":
            only_there = sorted(set(theirs.split()) - set(mine.split()))
            only_here = sorted(set(mine.split()) - set(theirs.split()))
            there = f"{', '.join(only_there)} only where recorded" if only_there else ""
            mine_only = f"{', '.join(only_here)} only here" if only_here else ""
            found.append("SIMD flags differ: " + "; ".join(p for p in (there, mine_only) if p))
        elif field in ("cpu", "os"):
            found.append(f"recorded on {theirs}, replayed on {mine}")
        else:
            label = {"python": "Python", "numpy": "numpy", "blas": "BLAS"}[field]
            found.append(f"recorded with {label} {theirs}, replayed with {mine}")
    return found


def _blas() -> Tuple[str, str, str]:
    """(library and version, kernel, how both were found)."""
    for path in _loaded_blas_libraries():
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        config = _call(library, _CONFIG_SYMBOLS)
        if config:
            kernel = _call(library, _CORE_SYMBOLS) or "unknown"
            words = config.split()
            name = " ".join(words[:2]) if len(words) >= 2 else config
            return name, kernel, f"openblas_get_config() of {os.path.basename(path)}"
    return _built_with(), "unknown", "numpy's build configuration"


def _loaded_blas_libraries() -> List[str]:
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            paths = {line.split()[-1] for line in f if "blas" in line.lower() and "/" in line}
    except OSError:
        return []
    return sorted(p for p in paths if p.startswith("/"))


def _call(library: ctypes.CDLL, symbols: Tuple[str, ...]) -> str:
    for symbol in symbols:
        function = getattr(library, symbol, None)
        if function is not None:
            function.restype = ctypes.c_char_p
            value = function()
            return value.decode("ascii", "replace").strip() if value else ""
    return ""


def _built_with() -> str:
    """The BLAS numpy was built with, from its own configuration (no kernel: that is chosen at run time)."""
    config = getattr(np, "__config__", None)
    try:
        info = config.show(mode="dicts")["Build Dependencies"]["blas"]  # numpy >= 1.26
        return f"{info.get('name', 'unknown')} {info.get('version', '')}".strip()
    except Exception:  # numpy 1.19's config is a set of dicts: blas_opt_info names the libraries
        libraries = getattr(config, "blas_opt_info", {}).get("libraries", [])
        return " ".join(libraries) or "unknown"


def _cpuinfo() -> List[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            return f.read(1 << 20).splitlines()
    except OSError:
        return []


def _cpu_model() -> str:
    for line in _cpuinfo():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "cpu model"):
            return value.strip()
    return platform.processor() or platform.machine() or "unknown"


def _simd_flags() -> List[str]:
    for line in _cpuinfo():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return sorted({flag for flag in value.split() if flag.startswith(_SIMD_PREFIXES)})
    return []
