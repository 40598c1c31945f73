"""Software prefetch hints for numba kernels (``llvm.prefetch``): no effect on any result.

A kernel that will touch an array element in an order the hardware prefetcher cannot guess (a
hashed slot, a random table row) asks for its cache line some steps ahead, so that the miss
overlaps other work.

- ``prefetch_read(array, i)`` / ``prefetch_write(array, i)`` for 1-D arrays;
- ``prefetch_read2(array, row, col)`` / ``prefetch_write2(array, row, col)`` for 2-D arrays.

No bounds check: the index must lie inside the array (a hint to an unmapped address is harmless on
x86 and AArch64, but keep within bounds anyway).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

#: llvm.prefetch arguments: locality "keep in all cache levels", data cache.
_LOCALITY, _DATA = 3, 1


def _codegen(write: int):
    def codegen(context, builder, signature, args):
        arytype = signature.args[0]
        ary = context.make_array(arytype)(context, builder, args[0])
        index = [context.cast(builder, a, t, types.intp) for a, t in zip(args[1:], signature.args[1:], strict=True)]
        ptr = cgutils.get_item_pointer(context, builder, arytype, ary, index, wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = builder.module.declare_intrinsic("llvm.prefetch", [i8p], fnty)  # mangles per LLVM version
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(write), i32(_LOCALITY), i32(_DATA)])
        return context.get_dummy_value()

    return codegen


def _is(array, ndim: int) -> bool:
    return isinstance(array, types.Array) and array.ndim == ndim


def _one_d(write: int):
    @intrinsic
    def prefetch(typingctx, array, i):
        if not (_is(array, 1) and isinstance(i, types.Integer)):
            return None
        return types.void(array, i), _codegen(write)

    return prefetch


def _two_d(write: int):
    @intrinsic
    def prefetch(typingctx, array, row, col):
        if not (_is(array, 2) and isinstance(row, types.Integer) and isinstance(col, types.Integer)):
            return None
        return types.void(array, row, col), _codegen(write)

    return prefetch


prefetch_read = _one_d(0)
prefetch_write = _one_d(1)
prefetch_read2 = _two_d(0)
prefetch_write2 = _two_d(1)
