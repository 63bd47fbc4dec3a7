/*
 * sandbox_blob.S - the sandbox's first program (sandbox_init.c), built
 * on its own, carried as bytes: sandbox.c hands them to bwrap as a
 * read-only file, so the tool needs no installed helper beside it.
 * SANDBOX_INIT_BIN is the built program's path (the Makefile's).
 */
	.section .rodata
	.balign 16
	.globl rba_sandbox_init_start
	.globl rba_sandbox_init_end
rba_sandbox_init_start:
	.incbin SANDBOX_INIT_BIN
rba_sandbox_init_end:
	.byte 0
	.section .note.GNU-stack,"",%progbits
