.section .text.used,"ax",%progbits
.global used
used: .word 1
.section .text.other,"ax",%progbits
.global other
other: .word 2
.section .comment,"",%progbits
.asciz "hi"
