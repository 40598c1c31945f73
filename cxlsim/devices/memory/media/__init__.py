"""The shared media model of the memory families: the model (:mod:`.media`), its numba kernel
(:mod:`.media_kernel`) and plain-Python reference (:mod:`.media_reference`), the kernel's parts
(queue, slots, pending table, write-combining buffer, geometry) and its vector layout (:mod:`.media_index`)."""
