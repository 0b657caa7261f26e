.section .text._start,"ax",%progbits
.global _start
_start: .word used
.section .text.unused,"ax",%progbits
.global unused
unused: .word missing
.section .init_array,"aw",%init_array
.word ia
.section .myarr,"aw",%init_array
.word 0
.section .ctors,"aw",%progbits
.word 0
.section .note.x,"a",%note
.word 0
.section .keepme,"a",%progbits
.word 0
.section .retained,"aR",%progbits
.word 0
.section .data.d1,"aw",%progbits
.word 0
.section .disc,"a",%progbits
.word 0
.section .emptysec,"ax",%progbits
