//go:build !purego

#include "textflag.h"

// func laneSumsAVX(acc, x, w *float64, n, stride, h int)
//
// For each unit j < h: acc[4j:4j+4] += x[4b:4b+4] * w[j*stride+4b:][:4]
// for b = 0, 1, ... in order, with separate multiplies and adds (no FMA):
// the four lanes of a register are the four running sums of DotUnitary.
TEXT ·laneSumsAVX(SB), NOSPLIT, $0-48
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ stride+32(FP), R8
	MOVQ h+40(FP), R9
	SHLQ $3, CX // bytes of x
	SHLQ $3, R8 // bytes between rows of w
	TESTQ CX, CX
	JE   done
	TESTQ R9, R9
	JE   done

unit:
	VMOVUPD (DI), Y0
	XORQ    AX, AX

block:
	VMOVUPD (SI)(AX*1), Y1
	VMULPD  (DX)(AX*1), Y1, Y1
	VADDPD  Y1, Y0, Y0
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     block

	VMOVUPD Y0, (DI)
	ADDQ    $32, DI
	ADDQ    R8, DX
	DECQ    R9
	JNZ     unit

done:
	VZEROUPPER
	RET

// func hiddenAVX(h, hs, lanes, x, tail, w *float64, n, nt, stride, units int)
//
// For each unit j < units, with w_j = w[j*stride:]: starting from the
// lanes lanes[4j:4j+4], add x[4b:4b+4] * w_j[4b:][:4] for b = 0, 1, ...
// (n elements), then tail[t] * w_j[n+t] to lane 0 for t < nt, and write
// h[j] = hs[j] + ((s0 + s2) + (s1 + s3)): DotUnitary's order to the end.
TEXT ·hiddenAVX(SB), NOSPLIT, $0-80
	MOVQ h+0(FP), DI
	MOVQ hs+8(FP), R10
	MOVQ lanes+16(FP), R11
	MOVQ x+24(FP), SI
	MOVQ tail+32(FP), R12
	MOVQ w+40(FP), DX
	MOVQ n+48(FP), CX
	MOVQ nt+56(FP), R13
	MOVQ stride+64(FP), R8
	MOVQ units+72(FP), R9
	SHLQ $3, CX // bytes of x
	SHLQ $3, R8 // bytes between rows of w
	TESTQ R9, R9
	JE   hdone

hunit:
	VMOVUPD (R11), Y0
	XORQ    AX, AX
	TESTQ   CX, CX
	JE      htail

hblock:
	VMOVUPD (SI)(AX*1), Y1
	VMULPD  (DX)(AX*1), Y1, Y1
	VADDPD  Y1, Y0, Y0
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     hblock

htail:
	VEXTRACTF128 $1, Y0, X2 // X2 = (s2, s3); X0 = (s0, s1)
	LEAQ         (DX)(CX*1), R14
	XORQ         BX, BX
	TESTQ        R13, R13
	JE           hcombine

htailloop:
	VMOVSD (R12)(BX*8), X3
	VMULSD (R14)(BX*8), X3, X3
	VADDSD X3, X0, X0 // s0 += tail·w, s1 kept
	INCQ   BX
	CMPQ   BX, R13
	JLT    htailloop

hcombine:
	VADDPD    X2, X0, X0     // (s0+s2, s1+s3)
	VUNPCKHPD X0, X0, X3     // (s1+s3, s1+s3)
	VADDSD    X3, X0, X0     // (s0+s2) + (s1+s3)
	VMOVSD    (R10), X4
	VADDSD    X0, X4, X4     // hs[j] + dot
	VMOVSD    X4, (DI)
	ADDQ      $8, DI
	ADDQ      $8, R10
	ADDQ      $32, R11
	ADDQ      R8, DX
	DECQ      R9
	JNZ       hunit

hdone:
	VZEROUPPER
	RET

// func addRowsAVX(y *float64, ys int, coef *float64, cs, ci int, x *float64, xs, rows, terms, n int)
//
// For r < rows, for s < terms in order, with c = coef[r*cs+s*ci] != 0:
// y[r*ys:][:n] += c * x[s*xs:][:n], element by element (a multiply, then
// an add): gonum's AxpyUnitary, as its Dgemm calls it.
TEXT ·addRowsAVX(SB), NOSPLIT, $0-80
	MOVQ y+0(FP), DI
	MOVQ ys+8(FP), R8
	MOVQ coef+16(FP), R9
	MOVQ cs+24(FP), R10
	MOVQ ci+32(FP), R11
	MOVQ x+40(FP), SI
	MOVQ xs+48(FP), R12
	MOVQ terms+64(FP), R14
	MOVQ n+72(FP), R15
	SHLQ $3, R8  // bytes between rows of y
	SHLQ $3, R10 // bytes between coefficient rows
	SHLQ $3, R11 // bytes between coefficients of a row
	SHLQ $3, R12 // bytes between rows of x
	MOVQ R15, R13
	ANDQ $-4, R13 // elements in whole blocks
	CMPQ rows+56(FP), $0
	JE   adone
	TESTQ R14, R14
	JE   adone
	VXORPD X7, X7, X7

arow:
	MOVQ R9, CX  // &coef[r*cs]
	MOVQ SI, DX  // &x[0]
	MOVQ R14, BX // terms left

aterm:
	VMOVSD   (CX), X0
	VUCOMISD X7, X0
	JNE      ause
	JPS      ause // NaN is not zero
	JMP      anext

ause:
	VBROADCASTSD (CX), Y0
	XORQ         AX, AX
	CMPQ         AX, R13
	JGE          ascalar

ablock:
	VMULPD  (DX)(AX*8), Y0, Y1
	VADDPD  (DI)(AX*8), Y1, Y1
	VMOVUPD Y1, (DI)(AX*8)
	ADDQ    $4, AX
	CMPQ    AX, R13
	JLT     ablock

ascalar:
	CMPQ AX, R15
	JGE  anext

ascalarloop:
	VMULSD (DX)(AX*8), X0, X1
	VADDSD (DI)(AX*8), X1, X1
	VMOVSD X1, (DI)(AX*8)
	INCQ   AX
	CMPQ   AX, R15
	JLT    ascalarloop

anext:
	ADDQ R11, CX
	ADDQ R12, DX
	DECQ BX
	JNZ  aterm

	ADDQ R10, R9
	ADDQ R8, DI
	DECQ rows+56(FP)
	JNZ  arow

adone:
	VZEROUPPER
	RET
