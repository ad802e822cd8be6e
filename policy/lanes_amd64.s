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
