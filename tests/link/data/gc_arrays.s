.section .text.n,"ax",%progbits
.global nfn
nfn: .word 3
.section .comment,"",%progbits
.asciz "hi"
.section .ARM.attributes,"",%0x70000003
.word 0
.section .init_array.n,"aw",%init_array
.word 0
.section .fini_array,"aw",%fini_array
.word 0
.section .preinit_array,"aw",%preinit_array
.word 0
.section .dtors,"aw",%progbits
.word 0
.section .text.ia,"ax",%progbits
.global ia
ia: .word 0
