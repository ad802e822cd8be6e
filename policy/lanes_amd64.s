//go:build gc && !purego && !noasm && !safe

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

// func hiddenAVX(h, hs, lanes, x, tail, w *float64, n, nt, stride, units int, wt *float64, wts int)
//
// For each unit j < units, with w_j = w[j*stride:]: starting from the
// lanes lanes[4j:4j+4], add x[4b:4b+4] * w_j[4b:][:4] for b = 0, 1, ...
// (n elements), then tail[t] * w_j[n+t] to lane 0 for t < nt, and write
// h[j] = hs[j] + ((s0 + s2) + (s1 + s3)): DotUnitary's order to the end.
// Four units at a time share the loads of x, overlap their sums, and
// finish in one register per lane, taking the tail weights from wt, the
// same weights unit-major: wt[t*wts+j] = w_j[n+t].
TEXT ·hiddenAVX(SB), NOSPLIT, $0-96
	MOVQ h+0(FP), DI
	MOVQ hs+8(FP), R10
	MOVQ lanes+16(FP), R11
	MOVQ x+24(FP), SI
	MOVQ tail+32(FP), R12
	MOVQ w+40(FP), DX
	MOVQ n+48(FP), CX
	MOVQ stride+64(FP), R8
	MOVQ units+72(FP), R9
	SHLQ $3, CX // bytes of x
	SHLQ $3, R8 // bytes between rows of w

hquad:
	CMPQ R9, $4
	JLT  hone
	LEAQ (DX)(R8*1), R13
	LEAQ (R13)(R8*1), R14
	LEAQ (R14)(R8*1), R15
	VMOVUPD (R11), Y0
	VMOVUPD 32(R11), Y1
	VMOVUPD 64(R11), Y2
	VMOVUPD 96(R11), Y3
	XORQ    AX, AX
	TESTQ   CX, CX
	JE      hqtail

hqblock:
	VMOVUPD (SI)(AX*1), Y4
	VMULPD  (DX)(AX*1), Y4, Y5
	VADDPD  Y5, Y0, Y0
	VMULPD  (R13)(AX*1), Y4, Y5
	VADDPD  Y5, Y1, Y1
	VMULPD  (R14)(AX*1), Y4, Y5
	VADDPD  Y5, Y2, Y2
	VMULPD  (R15)(AX*1), Y4, Y5
	VADDPD  Y5, Y3, Y3
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     hqblock

hqtail:
	// transpose: Y0..Y3 = lane 0..3 of the four units
	VUNPCKLPD  Y1, Y0, Y4
	VUNPCKHPD  Y1, Y0, Y5
	VUNPCKLPD  Y3, Y2, Y6
	VUNPCKHPD  Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0
	VPERM2F128 $0x20, Y7, Y5, Y1
	VPERM2F128 $0x31, Y6, Y4, Y2
	VPERM2F128 $0x31, Y7, Y5, Y3
	MOVQ       nt+56(FP), BX
	TESTQ      BX, BX
	JE         hqcombine
	MOVQ       R12, AX        // &tail[t]
	MOVQ       wt+80(FP), R13 // &wt[t][j]: the tail weights of the four units
	MOVQ       wts+88(FP), R14
	SHLQ       $3, R14

hqtailloop:
	VBROADCASTSD (AX), Y8
	VMULPD       (R13), Y8, Y9
	VADDPD       Y9, Y0, Y0 // s0 += tail·w
	ADDQ         $8, AX
	ADDQ         R14, R13
	DECQ         BX
	JNZ          hqtailloop

hqcombine:
	VADDPD  Y2, Y0, Y0 // s0+s2
	VADDPD  Y3, Y1, Y1 // s1+s3
	VADDPD  Y1, Y0, Y0
	VADDPD  (R10), Y0, Y0 // hs[j] + dot
	VMOVUPD Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, R10
	ADDQ    $128, R11
	ADDQ    $32, wt+80(FP)
	LEAQ    (DX)(R8*4), DX
	SUBQ    $4, R9
	JMP     hquad

hone:
	TESTQ R9, R9
	JE    hdone
	MOVQ  nt+56(FP), R13

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
// an add): gonum's AxpyUnitary, as its Dgemm calls it. A stretch of 32,
// then 16 elements of a row of y stays in registers while every term is
// added to it, which leaves each element's sum in term order; the last
// 1–15 elements go through masked loads and stores.
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
	SHLQ $3, R15 // bytes of a row
	CMPQ rows+56(FP), $0
	JE   adone
	TESTQ R14, R14
	JE   adone
	VXORPD X7, X7, X7

arow:
	XORQ AX, AX // byte offset of the stretch in the row

a32:
	LEAQ 256(AX), R13
	CMPQ R13, R15
	JGT  a16
	VMOVUPD 0(DI)(AX*1), Y2
	VMOVUPD 32(DI)(AX*1), Y3
	VMOVUPD 64(DI)(AX*1), Y4
	VMOVUPD 96(DI)(AX*1), Y5
	VMOVUPD 128(DI)(AX*1), Y6
	VMOVUPD 160(DI)(AX*1), Y7
	VMOVUPD 192(DI)(AX*1), Y8
	VMOVUPD 224(DI)(AX*1), Y9
	MOVQ    R9, CX
	LEAQ    (SI)(AX*1), DX
	MOVQ    R14, BX

a32term:
	VMOVSD   (CX), X0
	VUCOMISD X7, X0
	JNE      a32use
	JPS      a32use // NaN is not zero
	JMP      a32next

a32use:
	VBROADCASTSD (CX), Y0
	VMULPD       0(DX), Y0, Y1
	VADDPD       Y1, Y2, Y2
	VMULPD       32(DX), Y0, Y1
	VADDPD       Y1, Y3, Y3
	VMULPD       64(DX), Y0, Y1
	VADDPD       Y1, Y4, Y4
	VMULPD       96(DX), Y0, Y1
	VADDPD       Y1, Y5, Y5
	VMULPD       128(DX), Y0, Y1
	VADDPD       Y1, Y6, Y6
	VMULPD       160(DX), Y0, Y1
	VADDPD       Y1, Y7, Y7
	VMULPD       192(DX), Y0, Y1
	VADDPD       Y1, Y8, Y8
	VMULPD       224(DX), Y0, Y1
	VADDPD       Y1, Y9, Y9

a32next:
	ADDQ R11, CX
	ADDQ R12, DX
	DECQ BX
	JNZ  a32term
	VMOVUPD Y2, 0(DI)(AX*1)
	VMOVUPD Y3, 32(DI)(AX*1)
	VMOVUPD Y4, 64(DI)(AX*1)
	VMOVUPD Y5, 96(DI)(AX*1)
	VMOVUPD Y6, 128(DI)(AX*1)
	VMOVUPD Y7, 160(DI)(AX*1)
	VMOVUPD Y8, 192(DI)(AX*1)
	VMOVUPD Y9, 224(DI)(AX*1)
	ADDQ $256, AX
	JMP  a32

a16:
	LEAQ 128(AX), R13
	CMPQ R13, R15
	JGT  amask
	VMOVUPD 0(DI)(AX*1), Y2
	VMOVUPD 32(DI)(AX*1), Y3
	VMOVUPD 64(DI)(AX*1), Y4
	VMOVUPD 96(DI)(AX*1), Y5
	MOVQ    R9, CX
	LEAQ    (SI)(AX*1), DX
	MOVQ    R14, BX

a16term:
	VMOVSD   (CX), X0
	VUCOMISD X7, X0
	JNE      a16use
	JPS      a16use // NaN is not zero
	JMP      a16next

a16use:
	VBROADCASTSD (CX), Y0
	VMULPD       0(DX), Y0, Y1
	VADDPD       Y1, Y2, Y2
	VMULPD       32(DX), Y0, Y1
	VADDPD       Y1, Y3, Y3
	VMULPD       64(DX), Y0, Y1
	VADDPD       Y1, Y4, Y4
	VMULPD       96(DX), Y0, Y1
	VADDPD       Y1, Y5, Y5

a16next:
	ADDQ R11, CX
	ADDQ R12, DX
	DECQ BX
	JNZ  a16term
	VMOVUPD Y2, 0(DI)(AX*1)
	VMOVUPD Y3, 32(DI)(AX*1)
	VMOVUPD Y4, 64(DI)(AX*1)
	VMOVUPD Y5, 96(DI)(AX*1)
	ADDQ $128, AX

amask:
	MOVQ R15, R13
	SUBQ AX, R13 // bytes left, 0..120
	JE   arownext
	// lane i of the 16 is live iff i < left: masks from tailMask[16-left:]
	LEAQ    ·tailMask+128(SB), BX
	SUBQ    R13, BX
	VMOVUPD (BX), Y8
	VMOVUPD 32(BX), Y9
	VMOVUPD 64(BX), Y10
	VMOVUPD 96(BX), Y11
	VMASKMOVPD 0(DI)(AX*1), Y8, Y2
	VMASKMOVPD 32(DI)(AX*1), Y9, Y3
	VMASKMOVPD 64(DI)(AX*1), Y10, Y4
	VMASKMOVPD 96(DI)(AX*1), Y11, Y5
	MOVQ    R9, CX
	LEAQ    (SI)(AX*1), DX
	MOVQ    R14, BX

amterm:
	VMOVSD   (CX), X0
	VUCOMISD X7, X0
	JNE      amuse
	JPS      amuse // NaN is not zero
	JMP      amnext

amuse:
	VBROADCASTSD (CX), Y0
	VMASKMOVPD 0(DX), Y8, Y1
	VMULPD       Y1, Y0, Y1
	VADDPD       Y1, Y2, Y2
	VMASKMOVPD 32(DX), Y9, Y1
	VMULPD       Y1, Y0, Y1
	VADDPD       Y1, Y3, Y3
	VMASKMOVPD 64(DX), Y10, Y1
	VMULPD       Y1, Y0, Y1
	VADDPD       Y1, Y4, Y4
	VMASKMOVPD 96(DX), Y11, Y1
	VMULPD       Y1, Y0, Y1
	VADDPD       Y1, Y5, Y5

amnext:
	ADDQ R11, CX
	ADDQ R12, DX
	DECQ BX
	JNZ  amterm
	VMASKMOVPD Y2, Y8, 0(DI)(AX*1)
	VMASKMOVPD Y3, Y9, 32(DI)(AX*1)
	VMASKMOVPD Y4, Y10, 64(DI)(AX*1)
	VMASKMOVPD Y5, Y11, 96(DI)(AX*1)

arownext:
	ADDQ R10, R9
	ADDQ R8, DI
	DECQ rows+56(FP)
	JNZ  arow

adone:
	VZEROUPPER
	RET

// tailMask is 16 all-ones lanes, then 16 zero lanes.
DATA ·tailMask+0(SB)/8, $-1
DATA ·tailMask+8(SB)/8, $-1
DATA ·tailMask+16(SB)/8, $-1
DATA ·tailMask+24(SB)/8, $-1
DATA ·tailMask+32(SB)/8, $-1
DATA ·tailMask+40(SB)/8, $-1
DATA ·tailMask+48(SB)/8, $-1
DATA ·tailMask+56(SB)/8, $-1
DATA ·tailMask+64(SB)/8, $-1
DATA ·tailMask+72(SB)/8, $-1
DATA ·tailMask+80(SB)/8, $-1
DATA ·tailMask+88(SB)/8, $-1
DATA ·tailMask+96(SB)/8, $-1
DATA ·tailMask+104(SB)/8, $-1
DATA ·tailMask+112(SB)/8, $-1
DATA ·tailMask+120(SB)/8, $-1
DATA ·tailMask+128(SB)/8, $0
DATA ·tailMask+136(SB)/8, $0
DATA ·tailMask+144(SB)/8, $0
DATA ·tailMask+152(SB)/8, $0
DATA ·tailMask+160(SB)/8, $0
DATA ·tailMask+168(SB)/8, $0
DATA ·tailMask+176(SB)/8, $0
DATA ·tailMask+184(SB)/8, $0
DATA ·tailMask+192(SB)/8, $0
DATA ·tailMask+200(SB)/8, $0
DATA ·tailMask+208(SB)/8, $0
DATA ·tailMask+216(SB)/8, $0
DATA ·tailMask+224(SB)/8, $0
DATA ·tailMask+232(SB)/8, $0
DATA ·tailMask+240(SB)/8, $0
DATA ·tailMask+248(SB)/8, $0
GLOBL ·tailMask(SB), RODATA|NOPTR, $256

// func backHeadAVX(gw2, gb1, w2, h, dpre, ds *float64, nA, units int)
//
// For each action a < nA in order, with c = ds[a] and h_a = h[a*units:]:
// gw2 += c·h_a; dpre_a = (c·w2)·(1 − h_a·h_a); gb1 += dpre_a, element by
// element (units a multiple of 4), each product and sum rounded on its own.
TEXT ·backHeadAVX(SB), NOSPLIT, $0-64
	MOVQ gw2+0(FP), DI
	MOVQ gb1+8(FP), SI
	MOVQ w2+16(FP), DX
	MOVQ h+24(FP), R8
	MOVQ dpre+32(FP), R9
	MOVQ ds+40(FP), R10
	MOVQ nA+48(FP), R11
	MOVQ units+56(FP), CX
	SHLQ $3, CX // bytes of a row
	TESTQ R11, R11
	JE   bdone
	TESTQ CX, CX
	JE   bdone
	MOVQ $0x3ff0000000000000, AX // 1.0
	MOVQ AX, X7
	VBROADCASTSD X7, Y7

baction:
	VBROADCASTSD (R10), Y0 // c
	XORQ         AX, AX

bblock:
	VMOVUPD (R8)(AX*1), Y1 // h
	VMULPD  Y1, Y0, Y2
	VADDPD  (DI)(AX*1), Y2, Y2
	VMOVUPD Y2, (DI)(AX*1) // gw2 += c·h
	VMULPD  (DX)(AX*1), Y0, Y3 // c·w2
	VMULPD  Y1, Y1, Y4
	VSUBPD  Y4, Y7, Y4 // 1 − h·h
	VMULPD  Y4, Y3, Y3
	VMOVUPD Y3, (R9)(AX*1) // dpre
	VADDPD  (SI)(AX*1), Y3, Y3
	VMOVUPD Y3, (SI)(AX*1) // gb1 += dpre
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     bblock

	ADDQ CX, R8
	ADDQ CX, R9
	ADDQ $8, R10
	DECQ R11
	JNZ  baction

bdone:
	VZEROUPPER
	RET

// func embedAVX(x, params *float64, ids *int32, n, stride, d int)
//
// x[:d] = Σ params[id*stride:][:d] over the n ids in order, element by
// element from +0 (d a multiple of 4).
TEXT ·embedAVX(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), DI
	MOVQ params+8(FP), SI
	MOVQ ids+16(FP), DX
	MOVQ n+24(FP), R8
	MOVQ stride+32(FP), R9
	MOVQ d+40(FP), CX
	SHLQ $3, R9 // bytes between rows
	SHLQ $3, CX // bytes of x
	XORQ AX, AX // byte offset of the block

eblock:
	CMPQ   AX, CX
	JGE    edone
	VXORPD Y0, Y0, Y0
	XORQ   BX, BX

eid:
	CMPQ     BX, R8
	JGE      estore
	MOVLQSX  (DX)(BX*4), R10
	IMULQ    R9, R10
	ADDQ     SI, R10
	VADDPD   (R10)(AX*1), Y0, Y0
	INCQ     BX
	JMP      eid

estore:
	VMOVUPD Y0, (DI)(AX*1)
	ADDQ    $32, AX
	JMP     eblock

edone:
	VZEROUPPER
	RET

// The transposed kernels (AVX-512): a register holds one lane of eight
// units, so an element of z is broadcast once and meets the weights of
// eight units in one multiply, and the lanes combine without shuffles.
// Lanes are laid out lane-major, lanes[k*units+j], and the weights
// element-major, wt[i*units+j] = W1a[j][i] (see transposedWeights); units
// is a multiple of 16: two registers per lane, eight running sums.

// T4 adds the four elements at (R15) to the lanes of sixteen units, each
// against its row of weights (AX, rows R8 bytes apart).
#define T4 \
	VBROADCASTSD (R15), Z8 \
	VMULPD       (AX), Z8, Z9 \
	VMULPD       64(AX), Z8, Z10 \
	VADDPD       Z9, Z0, Z0 \
	VADDPD       Z10, Z4, Z4 \
	ADDQ         R8, AX \
	VBROADCASTSD 8(R15), Z8 \
	VMULPD       (AX), Z8, Z9 \
	VMULPD       64(AX), Z8, Z10 \
	VADDPD       Z9, Z1, Z1 \
	VADDPD       Z10, Z5, Z5 \
	ADDQ         R8, AX \
	VBROADCASTSD 16(R15), Z8 \
	VMULPD       (AX), Z8, Z9 \
	VMULPD       64(AX), Z8, Z10 \
	VADDPD       Z9, Z2, Z2 \
	VADDPD       Z10, Z6, Z6 \
	ADDQ         R8, AX \
	VBROADCASTSD 24(R15), Z8 \
	VMULPD       (AX), Z8, Z9 \
	VMULPD       64(AX), Z8, Z10 \
	VADDPD       Z9, Z3, Z3 \
	VADDPD       Z10, Z7, Z7 \
	ADDQ         R8, AX

// LOADLANES loads the lanes of units j..j+15 (BX = &lanes[0][j]) into
// Z0..Z3 (units j..j+7) and Z4..Z7 (units j+8..j+15).
#define LOADLANES \
	VMOVUPD (BX), Z0 \
	VMOVUPD 64(BX), Z4 \
	ADDQ    R8, BX \
	VMOVUPD (BX), Z1 \
	VMOVUPD 64(BX), Z5 \
	ADDQ    R8, BX \
	VMOVUPD (BX), Z2 \
	VMOVUPD 64(BX), Z6 \
	ADDQ    R8, BX \
	VMOVUPD (BX), Z3 \
	VMOVUPD 64(BX), Z7

// func lanesT512(lanes, x, wt *float64, n, units int)
//
// For every unit j: lane k of j += x[4b+k] * wt[(4b+k)*units+j] for
// b = 0, 1, ... in order (n a multiple of 4).
TEXT ·lanesT512(SB), NOSPLIT, $0-40
	MOVQ lanes+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ wt+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ units+32(FP), R8
	SHLQ $3, R8 // bytes of a row of lanes or weights
	XORQ R13, R13 // byte offset of the units in hand

lgroup:
	CMPQ R13, R8
	JGE  ldone
	LEAQ (DI)(R13*1), BX
	LOADLANES
	LEAQ (DX)(R13*1), AX
	MOVQ SI, R15
	MOVQ CX, R14
	TESTQ R14, R14
	JE   lstore

lblock:
	T4
	ADDQ $32, R15
	SUBQ $4, R14
	JNZ  lblock

lstore:
	LEAQ    (DI)(R13*1), BX
	VMOVUPD Z0, (BX)
	VMOVUPD Z4, 64(BX)
	ADDQ    R8, BX
	VMOVUPD Z1, (BX)
	VMOVUPD Z5, 64(BX)
	ADDQ    R8, BX
	VMOVUPD Z2, (BX)
	VMOVUPD Z6, 64(BX)
	ADDQ    R8, BX
	VMOVUPD Z3, (BX)
	VMOVUPD Z7, 64(BX)
	ADDQ    $128, R13
	JMP     lgroup

ldone:
	VZEROUPPER
	RET

// func hiddenT512(h, hs, lanes, x, tail, wt *float64, n, nt, units int)
//
// hiddenAVX's sums in the transposed layout: for every unit j, starting
// from its lanes, add x[4b+k] * wt[(4b+k)*units+j] to lane k (n a
// multiple of 4), then tail[t] * wt[(n+t)*units+j] to lane 0 for t < nt,
// and write h[j] = hs[j] + ((s0+s2) + (s1+s3)).
TEXT ·hiddenT512(SB), NOSPLIT, $0-72
	MOVQ h+0(FP), DI
	MOVQ hs+8(FP), R10
	MOVQ lanes+16(FP), R11
	MOVQ x+24(FP), SI
	MOVQ tail+32(FP), R12
	MOVQ wt+40(FP), DX
	MOVQ n+48(FP), CX
	MOVQ units+64(FP), R8
	SHLQ $3, R8 // bytes of a row of lanes or weights
	XORQ R13, R13 // byte offset of the units in hand

tgroup:
	CMPQ R13, R8
	JGE  tdone
	LEAQ (R11)(R13*1), BX
	LOADLANES
	LEAQ (DX)(R13*1), AX
	MOVQ SI, R15
	MOVQ CX, R14
	TESTQ R14, R14
	JE   ttail

tblock:
	T4
	ADDQ $32, R15
	SUBQ $4, R14
	JNZ  tblock

ttail:
	MOVQ  R12, R15
	MOVQ  nt+56(FP), R14
	TESTQ R14, R14
	JE    tcombine

ttailloop:
	VBROADCASTSD (R15), Z8
	VMULPD       (AX), Z8, Z9
	VMULPD       64(AX), Z8, Z10
	VADDPD       Z9, Z0, Z0 // s0 += tail·w
	VADDPD       Z10, Z4, Z4
	ADDQ         R8, AX
	ADDQ         $8, R15
	DECQ         R14
	JNZ          ttailloop

tcombine:
	VADDPD  Z2, Z0, Z0 // s0+s2
	VADDPD  Z3, Z1, Z1 // s1+s3
	VADDPD  Z1, Z0, Z0
	VADDPD  (R10)(R13*1), Z0, Z0 // hs[j] + dot
	VMOVUPD Z0, (DI)(R13*1)
	VADDPD  Z6, Z4, Z4
	VADDPD  Z7, Z5, Z5
	VADDPD  Z5, Z4, Z4
	VADDPD  64(R10)(R13*1), Z4, Z4
	VMOVUPD Z4, 64(DI)(R13*1)
	ADDQ    $128, R13
	JMP     tgroup

tdone:
	VZEROUPPER
	RET

// ZTERMS(label, use, next, OPS) runs OPS for every term s < terms whose
// coefficient (CX, then every R11 bytes) is not zero, with the coefficient
// broadcast in Z0 and DX at the term's stretch of x (then every R12 bytes).
#define ZTERMS(label, use, next, OPS) \
	MOVQ R9, CX \
	LEAQ (SI)(AX*1), DX \
	MOVQ R14, BX \
label: \
	VMOVSD   (CX), X0 \
	VUCOMISD X7, X0 \
	JNE      use \
	JPS      use \
	JMP      next \
use: \
	VBROADCASTSD (CX), Z0 \
	OPS \
next: \
	ADDQ R11, CX \
	ADDQ R12, DX \
	DECQ BX \
	JNZ  label

#define Z32OPS \
	VMULPD 0(DX), Z0, Z1 \
	VADDPD Z1, Z2, Z2 \
	VMULPD 64(DX), Z0, Z1 \
	VADDPD Z1, Z3, Z3 \
	VMULPD 128(DX), Z0, Z1 \
	VADDPD Z1, Z4, Z4 \
	VMULPD 192(DX), Z0, Z1 \
	VADDPD Z1, Z5, Z5

#define Z16OPS \
	VMULPD 0(DX), Z0, Z1 \
	VADDPD Z1, Z2, Z2 \
	VMULPD 64(DX), Z0, Z1 \
	VADDPD Z1, Z3, Z3

#define Z48OPS \
	Z32OPS \
	VMOVUPD.Z 256(DX), K1, Z1 \
	VMULPD    Z1, Z0, Z1 \
	VADDPD    Z1, Z6, Z6 \
	VMOVUPD.Z 320(DX), K2, Z1 \
	VMULPD    Z1, Z0, Z1 \
	VADDPD    Z1, Z8, Z8

#define ZMASKOPS \
	VMOVUPD.Z 0(DX), K1, Z1 \
	VMULPD    Z1, Z0, Z1 \
	VADDPD    Z1, Z2, Z2 \
	VMOVUPD.Z 64(DX), K2, Z1 \
	VMULPD    Z1, Z0, Z1 \
	VADDPD    Z1, Z3, Z3

// func addRows512(y *float64, ys int, coef *float64, cs, ci int, x *float64, xs, rows, terms, n int)
//
// addRowsAVX with AVX-512: a stretch of 32, then 16 elements of a row of
// y stays in four or two registers while every term is added to it, and
// the last 1–15 elements go through masked loads and stores (a last
// stretch of 33–47 in one pass, four registers and two masked); each
// element still takes its terms in order, a multiply then an add.
TEXT ·addRows512(SB), NOSPLIT, $0-80
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
	SHLQ $3, R15 // bytes of a row
	CMPQ rows+56(FP), $0
	JE   zadone
	TESTQ R14, R14
	JE   zadone
	VXORPD X7, X7, X7
	// the masks of the last 1–15 elements of a row: K1 the first 8, K2 the rest
	MOVQ  n+72(FP), CX
	ANDQ  $15, CX
	MOVQ  $1, BX
	SHLQ  CX, BX
	DECQ  BX
	KMOVW BX, K1
	SHRQ  $8, BX
	KMOVW BX, K2

zarow:
	XORQ AX, AX // byte offset of the stretch in the row

za32:
	// 33–47 elements left: one pass over the terms, four registers and two masked
	MOVQ R15, R13
	SUBQ AX, R13
	CMPQ R13, $256
	JLE  za32full
	CMPQ R13, $384
	JGE  za32full
	VMOVUPD   0(DI)(AX*1), Z2
	VMOVUPD   64(DI)(AX*1), Z3
	VMOVUPD   128(DI)(AX*1), Z4
	VMOVUPD   192(DI)(AX*1), Z5
	VMOVUPD.Z 256(DI)(AX*1), K1, Z6
	VMOVUPD.Z 320(DI)(AX*1), K2, Z8
	ZTERMS(za48term, za48use, za48next, Z48OPS)
	VMOVUPD Z2, 0(DI)(AX*1)
	VMOVUPD Z3, 64(DI)(AX*1)
	VMOVUPD Z4, 128(DI)(AX*1)
	VMOVUPD Z5, 192(DI)(AX*1)
	VMOVUPD Z6, K1, 256(DI)(AX*1)
	VMOVUPD Z8, K2, 320(DI)(AX*1)
	JMP     zarownext

za32full:
	LEAQ 256(AX), R13
	CMPQ R13, R15
	JGT  za16
	VMOVUPD 0(DI)(AX*1), Z2
	VMOVUPD 64(DI)(AX*1), Z3
	VMOVUPD 128(DI)(AX*1), Z4
	VMOVUPD 192(DI)(AX*1), Z5
	ZTERMS(za32term, za32use, za32next, Z32OPS)
	VMOVUPD Z2, 0(DI)(AX*1)
	VMOVUPD Z3, 64(DI)(AX*1)
	VMOVUPD Z4, 128(DI)(AX*1)
	VMOVUPD Z5, 192(DI)(AX*1)
	ADDQ $256, AX
	JMP  za32

za16:
	LEAQ 128(AX), R13
	CMPQ R13, R15
	JGT  zamask
	VMOVUPD 0(DI)(AX*1), Z2
	VMOVUPD 64(DI)(AX*1), Z3
	ZTERMS(za16term, za16use, za16next, Z16OPS)
	VMOVUPD Z2, 0(DI)(AX*1)
	VMOVUPD Z3, 64(DI)(AX*1)
	ADDQ $128, AX

zamask:
	CMPQ AX, R15
	JEQ  zarownext
	VMOVUPD.Z 0(DI)(AX*1), K1, Z2
	VMOVUPD.Z 64(DI)(AX*1), K2, Z3
	ZTERMS(zamterm, zamuse, zamnext, ZMASKOPS)
	VMOVUPD Z2, K1, 0(DI)(AX*1)
	VMOVUPD Z3, K2, 64(DI)(AX*1)

zarownext:
	ADDQ R10, R9
	ADDQ R8, DI
	DECQ rows+56(FP)
	JNZ  zarow

zadone:
	VZEROUPPER
	RET

// func scatterAddAVX(dst, t *float64, ids *int32, n, stride, d int)
//
// dst[id*stride:][:d] += t[:d] for the n ids in order, element by element
// (d a multiple of 4): the rows an embedding was summed from take its
// gradient.
TEXT ·scatterAddAVX(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ t+8(FP), SI
	MOVQ ids+16(FP), DX
	MOVQ n+24(FP), R8
	MOVQ stride+32(FP), R9
	MOVQ d+40(FP), CX
	SHLQ $3, R9 // bytes between rows
	SHLQ $3, CX // bytes of t
	XORQ BX, BX

sid:
	CMPQ    BX, R8
	JGE     sdone
	MOVLQSX (DX)(BX*4), R10
	IMULQ   R9, R10
	ADDQ    DI, R10
	XORQ    AX, AX

sblock:
	VMOVUPD (R10)(AX*1), Y0
	VADDPD  (SI)(AX*1), Y0, Y0
	VMOVUPD Y0, (R10)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     sblock
	INCQ    BX
	JMP     sid

sdone:
	VZEROUPPER
	RET
