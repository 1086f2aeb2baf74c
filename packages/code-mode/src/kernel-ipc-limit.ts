// Its own module so that the kernel and the nested-call code both read it without importing each other
// (kernel.ts -> run-code-journal.ts -> nested-call.ts -> kernel.ts was a cycle for this one constant).

/**
 * The largest message between Node and a Code Mode kernel. The default IPC limit (4 MiB) could not carry even the
 * 10 MiB of printed output, so the kernel gets room for the worst run_code reply at once: output of 10 Mi
 * characters (up to 6 bytes each as escaped JSON, 60 MiB), a result of 10 MiB of JSON (msgpack can take 2.25
 * times that for short floats; a repr instead: 10 Mi characters, 40 MiB) or an error message as large, 50 images
 * of at most 2 MiB each (100 MiB), and the traceback: about 200 MiB. So a reply is never refused as too large;
 * the 10 MiB caps are what bound it.
 */
export const KERNEL_IPC_LIMIT_BYTES = 256 * 1024 * 1024;
