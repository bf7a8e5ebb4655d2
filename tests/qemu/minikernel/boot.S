/* Multiboot entry of the system-mode test kernel: a stack, kmain, then QEMU exits through
 * the isa-debug-exit device (port 0xf4). */
        .section .multiboot, "a"
        .align 4
        .long 0x1BADB002
        .long 0
        .long -0x1BADB002

        .text
        .globl _start
_start:
        mov $stack_top, %esp
        call kmain
        mov $0xf4, %dx
        mov $0, %al
        outb %al, %dx
1:      hlt
        jmp 1b

        .bss
        .align 16
        .space 8192
stack_top:

        .section .note.GNU-stack, "", @progbits
