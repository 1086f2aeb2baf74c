"""What a data object holds, read without running user code: the ``summary`` of search matches and inspect.

A model that finds ``df`` needs its shape, columns and dtypes, not its class docstring or a 1,000-character table
repr. ``summary(obj)`` gives one line for

* numpy arrays (shape, dtype, nbytes), pandas DataFrame / Series / Index (shape, bounded column names and dtypes,
  memory), polars and pyarrow tables, torch tensors and jax arrays (shape, dtype, device);
* builtin containers and strings (``len``).

The rules that keep this free of user code:

* a library is looked at only when it is already in ``sys.modules`` (nothing is imported; a library nobody
  imported costs one dict lookup);
* types are compared with ``issubclass(type(obj), …)`` on real types (never ``isinstance``, which a ``__class__``
  property can fool);
* numpy and builtin values are read through the base type's own C-level descriptors and slots
  (``ndarray.shape.__get__``, ``list.__len__``), which a subclass cannot override;
* the libraries written in Python (pandas, polars, jax) are read only when every class in the object's MRO is the
  library's own (no subclass of the user's), and only through the library's own code; labels and dtypes are shown
  only when they are the library's or builtin values, so no user ``__str__`` runs.

A subclass of the user's (a DataFrame subclass whose ``shape`` hangs) gets a summary that names it and reads nothing;
its repr is not computed either, because a DataFrame repr reads ``shape``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from .static import is_heap_type, mro, type_module, type_name

_MAX_COLUMNS = 12
_BUILTIN_SIZED: tuple[Any, ...] = (list, tuple, dict, set, frozenset, str, bytes, bytearray)
_PLAIN_LABELS: tuple[type, ...] = (str, int, float, bool, type(None))


def _size(nbytes: Any) -> str:
    value = float(nbytes)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TB"  # pragma: no cover - the loop returns at GB


def _owned(tp: type, prefixes: tuple[str, ...]) -> bool:
    """True when every Python-level class in ``tp``'s MRO is defined by one of the libraries ``prefixes``."""
    for klass in mro(tp):
        if not is_heap_type(klass):
            continue
        module = type_module(klass) or ""
        if not any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes):
            return False
    return True


def _label(value: Any) -> str:
    """A column label as text when it is a builtin value (a user object's ``__str__`` never runs)."""
    if type(value) in _PLAIN_LABELS:
        return str(value)
    return f"<{type_name(type(value)) or 'object'}>"


def _dtype_text(dtype: Any, libraries: tuple[str, ...]) -> str:
    tp = type(dtype)
    if _owned(tp, libraries) and (type_module(tp) or "").split(".")[0] in {name.split(".")[0] for name in libraries}:
        return str(dtype)
    return f"<{type_name(tp) or 'dtype'}>"


def _columns(pairs: list[tuple[Any, Any]], total: int, libraries: tuple[str, ...]) -> str:
    shown = ", ".join(f"{_label(name)} {_dtype_text(dtype, libraries)}" for name, dtype in pairs[:_MAX_COLUMNS])
    more = total - min(len(pairs), _MAX_COLUMNS)
    return shown + (f", … {more} more" if more > 0 else "")


def _numpy(obj: Any, numpy: Any) -> str | None:
    ndarray = numpy.ndarray
    if not issubclass(type(obj), ndarray):
        return None
    shape = ndarray.shape.__get__(obj)
    dtype = ndarray.dtype.__get__(obj)
    nbytes = ndarray.nbytes.__get__(obj)
    name = type_name(type(obj)) or "ndarray"
    return f"{name} shape {tuple(shape)} {_dtype_text(dtype, ('numpy',))}, {_size(nbytes)}"


_PANDAS = ("pandas", "numpy", "abc", "typing")


def _pandas(obj: Any, pandas: Any) -> str | None:
    tp = type(obj)
    kinds = [getattr(pandas, name, None) for name in ("DataFrame", "Series", "Index")]
    base = next((kind for kind in kinds if isinstance(kind, type) and issubclass(tp, kind)), None)
    if base is None:
        return None
    name = type_name(tp) or "object"
    if not _owned(tp, _PANDAS):
        return f"{name}: a pandas.{type_name(base)} subclass; not read (its own code would run)"
    if base is kinds[0]:
        rows, width = obj.shape
        dtypes = obj.dtypes
        pairs = list(zip(list(obj.columns[:_MAX_COLUMNS]), list(dtypes.iloc[:_MAX_COLUMNS]), strict=False))
        memory = ""
        if all(_owned(type(dtype), _PANDAS) for _, dtype in pairs):
            memory = f"; {_size(obj.memory_usage(index=True, deep=False).sum())}"
        return f"{name} {rows} rows × {width} columns: {_columns(pairs, width, _PANDAS)}{memory}"
    label = obj.name
    named = f" {_label(label)}" if label is not None else ""
    text = f"{name}{named}, length {len(obj)}, {_dtype_text(obj.dtype, _PANDAS)}"
    if base is kinds[1] and _owned(type(obj.dtype), _PANDAS):
        text += f"; {_size(obj.memory_usage(index=True, deep=False))}"
    return text


def _polars(obj: Any, polars: Any) -> str | None:
    frame = getattr(polars, "DataFrame", None)
    if not isinstance(frame, type) or not issubclass(type(obj), frame):
        return None
    if not _owned(type(obj), ("polars",)):
        return f"{type_name(type(obj))}: a polars.DataFrame subclass; not read (its own code would run)"
    rows, width = obj.shape
    pairs = list(zip(obj.columns[:_MAX_COLUMNS], obj.dtypes[:_MAX_COLUMNS], strict=False))
    return f"polars DataFrame {rows} rows × {width} columns: {_columns(pairs, width, ('polars',))}; {_size(obj.estimated_size())}"


def _pyarrow(obj: Any, pyarrow: Any) -> str | None:
    table = getattr(pyarrow, "Table", None)
    if not isinstance(table, type) or type(obj) is not table:  # a Cython type; subclasses are not read
        return None
    read: Any = obj  # (type(obj) is table narrowed obj to "object" for mypy)
    schema = read.schema
    width = read.num_columns
    pairs = [(schema.field(index).name, schema.field(index).type) for index in range(min(width, _MAX_COLUMNS))]
    return f"pyarrow Table {read.num_rows} rows × {width} columns: {_columns(pairs, width, ('pyarrow',))}; {_size(read.nbytes)}"


def _torch(obj: Any, torch: Any) -> str | None:
    # Tensor attributes dispatch __torch_function__ for subclasses: only the two types torch itself makes are read.
    exact = (getattr(torch, "Tensor", None), getattr(getattr(torch, "nn", None), "Parameter", None))
    if not any(type(obj) is kind for kind in exact if kind is not None):
        return None
    return f"{type_name(type(obj))} shape {tuple(obj.shape)} {obj.dtype} on {obj.device}"


def _jax(obj: Any, jax: Any) -> str | None:
    array = getattr(jax, "Array", None)
    if not isinstance(array, type) or not issubclass(type(obj), array):
        return None
    if not _owned(type(obj), ("jax", "jaxlib")):
        return None
    return f"jax Array shape {tuple(obj.shape)} {obj.dtype}"


_LIBRARIES: tuple[tuple[str, Callable[[Any, Any], str | None]], ...] = (
    ("numpy", _numpy),
    ("pandas", _pandas),
    ("polars", _polars),
    ("pyarrow", _pyarrow),
    ("torch", _torch),
    ("jax", _jax),
)


def data_summary(obj: Any) -> str | None:
    """One line about a data object of an imported library; None when ``obj`` is none (its repr is then used)."""
    for module_name, read in _LIBRARIES:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        try:
            text = read(obj, module)
        except KeyboardInterrupt:
            raise
        except Exception:  # noqa: BLE001 - a library in an odd state: no summary rather than a failed search
            continue
        if text is not None:
            return text
    return None


def length_summary(obj: Any) -> str | None:
    """``len`` of a builtin container or string, through the builtin's own slot (a subclass's ``__len__`` never runs)."""
    tp = type(obj)
    for base in _BUILTIN_SIZED:
        if issubclass(tp, base):
            return f"len {base.__len__(obj)}"
    return None
