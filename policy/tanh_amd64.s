//go:build gc && !purego && !amd64.v3

#include "textflag.h"

// Offsets into the constants (see tanhK).
#define BIG 0
#define MID 8
#define ONE 16
#define TWO 24
#define P0 32
#define P1 40
#define P2 48
#define Q0 56
#define Q1 64
#define Q2 72
#define LOG2E 80
#define LN2U 88
#define LN2L 96
#define SIXTEENTH 104
#define C7 112
#define C6 120
#define C5 128
#define C4 136
#define C3 144
#define C2 152
#define HALF 160
#define ABS 168
#define SIGN 176
#define BIAS 184

// func tanhAVX(v *float64, n int, k *[tanhConsts]uint64)
//
// v[i] = math.Tanh(v[i]) for i < n (a multiple of 4), four lanes at a
// time. Every lane takes math/tanh.go's operations for its branch — ±1
// past 0.5·log(2¹²⁷), 1 − 2/(e^{2|x|}+1) with the sign of x from 0.625 on,
// x itself at ±0, the rational function below — with e^{2|x|} computed as
// math/exp_amd64.s does with FMA (the argument never reaches its special
// cases). Each formula is evaluated when a lane needs it, and every lane
// keeps its own branch's result.
TEXT ·tanhAVX(SB), NOSPLIT, $0-24
	MOVQ v+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ k+16(FP), SI
	SHLQ $3, CX
	XORQ AX, AX
	TESTQ CX, CX
	JE   done

loop:
	VMOVUPD      (DI)(AX*1), Y0       // x
	VBROADCASTSD ABS(SI), Y1
	VANDPD       Y1, Y0, Y1           // z = |x|
	VBROADCASTSD MID(SI), Y14
	VCMPPD       $0x1d, Y14, Y1, Y14  // z >= 0.625
	VMOVMSKPD    Y14, BX              // lanes of the exponential branch
	CMPQ         BX, $15
	JEQ          exp                  // no lane needs the rational function

	// the rational function: x + x·s·((P0·s+P1)·s+P2)/(((s+Q0)·s+Q1)·s+Q2), s = x·x
	VMULPD       Y0, Y0, Y2           // s
	VBROADCASTSD P0(SI), Y3
	VMULPD       Y2, Y3, Y3
	VBROADCASTSD P1(SI), Y4
	VADDPD       Y4, Y3, Y3
	VMULPD       Y2, Y3, Y3
	VBROADCASTSD P2(SI), Y4
	VADDPD       Y4, Y3, Y3           // numerator polynomial
	VBROADCASTSD Q0(SI), Y4
	VADDPD       Y4, Y2, Y4
	VMULPD       Y2, Y4, Y4
	VBROADCASTSD Q1(SI), Y5
	VADDPD       Y5, Y4, Y4
	VMULPD       Y2, Y4, Y4
	VBROADCASTSD Q2(SI), Y5
	VADDPD       Y5, Y4, Y4           // denominator
	VMULPD       Y2, Y0, Y5           // x·s
	VMULPD       Y3, Y5, Y5
	VDIVPD       Y4, Y5, Y5
	VADDPD       Y5, Y0, Y15          // result so far
	VXORPD       Y11, Y11, Y11
	VCMPPD       $0, Y11, Y0, Y12     // x == 0 keeps x
	VBLENDVPD    Y12, Y0, Y15, Y15
	TESTQ        BX, BX
	JEQ          store                // no lane needs the exponential

exp:
	// e^{2z}: k = round(2z·log2e), r = (2z − k·ln2U − k·ln2L)/16, ...
	VADDPD       Y1, Y1, Y2           // 2z
	VBROADCASTSD LOG2E(SI), Y3
	VMULPD       Y2, Y3, Y3
	VCVTPD2DQY   Y3, X6               // k, rounded to nearest
	VCVTDQ2PD    X6, Y3
	VBROADCASTSD LN2U(SI), Y4
	VFNMADD231PD Y4, Y3, Y2
	VBROADCASTSD LN2L(SI), Y4
	VFNMADD231PD Y4, Y3, Y2
	VBROADCASTSD SIXTEENTH(SI), Y4
	VMULPD       Y4, Y2, Y2           // r
	VBROADCASTSD C7(SI), Y3
	VBROADCASTSD C6(SI), Y4
	VFMADD213PD  Y4, Y2, Y3
	VBROADCASTSD C5(SI), Y4
	VFMADD213PD  Y4, Y2, Y3
	VBROADCASTSD C4(SI), Y4
	VFMADD213PD  Y4, Y2, Y3
	VBROADCASTSD C3(SI), Y4
	VFMADD213PD  Y4, Y2, Y3
	VBROADCASTSD C2(SI), Y4
	VFMADD213PD  Y4, Y2, Y3
	VBROADCASTSD HALF(SI), Y4
	VFMADD213PD  Y4, Y2, Y3
	VBROADCASTSD ONE(SI), Y7
	VFMADD213PD  Y7, Y2, Y3
	VMULPD       Y3, Y2, Y2
	VBROADCASTSD TWO(SI), Y8
	VADDPD       Y8, Y2, Y3
	VMULPD       Y3, Y2, Y2
	VADDPD       Y8, Y2, Y3
	VMULPD       Y3, Y2, Y2
	VADDPD       Y8, Y2, Y3
	VMULPD       Y3, Y2, Y2
	VADDPD       Y8, Y2, Y3
	VFMADD213PD  Y7, Y3, Y2           // e^r
	VPADDD       BIAS(SI), X6, X6
	VPMOVZXDQ    X6, Y6
	VPSLLQ       $52, Y6, Y6          // 2^k
	VMULPD       Y6, Y2, Y2           // e^{2z}

	// 1 − 2/(e^{2z}+1), with the sign of x
	VADDPD       Y7, Y2, Y2
	VDIVPD       Y2, Y8, Y2
	VSUBPD       Y2, Y7, Y2
	VBROADCASTSD SIGN(SI), Y9
	VANDPD       Y9, Y0, Y10          // sign of x
	VXORPD       Y10, Y2, Y2
	VBLENDVPD    Y14, Y2, Y15, Y15    // all lanes when no lane took the other branch
	VBROADCASTSD BIG(SI), Y12
	VCMPPD       $0x1e, Y12, Y1, Y12  // z > 0.5·maxLog
	VORPD        Y10, Y7, Y13         // ±1
	VBLENDVPD    Y12, Y13, Y15, Y15

store:
	VMOVUPD      Y15, (DI)(AX*1)
	ADDQ         $32, AX
	CMPQ         AX, CX
	JLT          loop

done:
	VZEROUPPER
	RET
