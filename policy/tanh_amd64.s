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

// RATIONAL leaves the rational function's numerator x·s·((P0·s+P1)·s+P2)
// in Z5 and its denominator ((s+Q0)·s+Q1)·s+Q2 in Z18 (s = x·x), for the
// eight lanes of Z0; EXPPLUS1 leaves both alone.
#define RATIONAL \
	VMULPD       Z0, Z0, Z2 \
	VBROADCASTSD P0(SI), Z3 \
	VMULPD       Z2, Z3, Z3 \
	VBROADCASTSD P1(SI), Z17 \
	VADDPD       Z17, Z3, Z3 \
	VMULPD       Z2, Z3, Z3 \
	VBROADCASTSD P2(SI), Z17 \
	VADDPD       Z17, Z3, Z3 \
	VBROADCASTSD Q0(SI), Z17 \
	VADDPD       Z17, Z2, Z18 \
	VMULPD       Z2, Z18, Z18 \
	VBROADCASTSD Q1(SI), Z17 \
	VADDPD       Z17, Z18, Z18 \
	VMULPD       Z2, Z18, Z18 \
	VBROADCASTSD Q2(SI), Z17 \
	VADDPD       Z17, Z18, Z18 \
	VMULPD       Z2, Z0, Z5 \
	VMULPD       Z3, Z5, Z5

// EXPPLUS1 leaves e^{2z}+1 in Z2 for z = |x| in Z1, as tanhAVX computes
// e^{2z} (Z7 = 1, Z8 = 2).
#define EXPPLUS1 \
	VADDPD       Z1, Z1, Z2 \
	VBROADCASTSD LOG2E(SI), Z3 \
	VMULPD       Z2, Z3, Z3 \
	VCVTPD2DQ    Z3, Y6 \
	VCVTDQ2PD    Y6, Z3 \
	VBROADCASTSD LN2U(SI), Z4 \
	VFNMADD231PD Z4, Z3, Z2 \
	VBROADCASTSD LN2L(SI), Z4 \
	VFNMADD231PD Z4, Z3, Z2 \
	VBROADCASTSD SIXTEENTH(SI), Z4 \
	VMULPD       Z4, Z2, Z2 \
	VBROADCASTSD C7(SI), Z3 \
	VBROADCASTSD C6(SI), Z4 \
	VFMADD213PD  Z4, Z2, Z3 \
	VBROADCASTSD C5(SI), Z4 \
	VFMADD213PD  Z4, Z2, Z3 \
	VBROADCASTSD C4(SI), Z4 \
	VFMADD213PD  Z4, Z2, Z3 \
	VBROADCASTSD C3(SI), Z4 \
	VFMADD213PD  Z4, Z2, Z3 \
	VBROADCASTSD C2(SI), Z4 \
	VFMADD213PD  Z4, Z2, Z3 \
	VBROADCASTSD HALF(SI), Z4 \
	VFMADD213PD  Z4, Z2, Z3 \
	VFMADD213PD  Z7, Z2, Z3 \
	VMULPD       Z3, Z2, Z2 \
	VADDPD       Z8, Z2, Z3 \
	VMULPD       Z3, Z2, Z2 \
	VADDPD       Z8, Z2, Z3 \
	VMULPD       Z3, Z2, Z2 \
	VADDPD       Z8, Z2, Z3 \
	VMULPD       Z3, Z2, Z2 \
	VADDPD       Z8, Z2, Z3 \
	VFMADD213PD  Z7, Z3, Z2 \
	VPBROADCASTD BIAS(SI), Y9 \
	VPADDD       Y9, Y6, Y6 \
	VPMOVZXDQ    Y6, Z6 \
	VPSLLQ       $52, Z6, Z6 \
	VMULPD       Z6, Z2, Z2 \
	VADDPD       Z7, Z2, Z2

// RATDONE writes x + Z5 (the rational branch's quotient added) to Z15,
// keeping x where x == 0.
#define RATDONE \
	VADDPD    Z5, Z0, Z15 \
	VPXORQ    Z11, Z11, Z11 \
	VCMPPD    $0, Z11, Z0, K2 \
	VBLENDMPD Z0, Z15, K2, Z15

// EXPDONE turns the quotient 2/(e^{2z}+1) in Z2 into 1 − Z2 with the sign
// of x, taking it into Z15 in the lanes of K1, and ±1 past 0.5·maxLog.
#define EXPDONE \
	VSUBPD       Z2, Z7, Z2 \
	VPBROADCASTQ SIGN(SI), Z9 \
	VPANDQ       Z9, Z0, Z10 \
	VPXORQ       Z10, Z2, Z2 \
	VBLENDMPD    Z2, Z15, K1, Z15 \
	VBROADCASTSD BIG(SI), Z12 \
	VCMPPD       $0x1e, Z12, Z1, K3 \
	VPORQ        Z10, Z7, Z13 \
	VBLENDMPD    Z13, Z15, K3, Z15

// func tanh512(v *float64, n int, k *[tanhConsts]uint64)
//
// tanhAVX eight lanes at a time (AVX-512, n a multiple of 8). Where the
// lanes take both branches, one division serves both: each lane divides
// its own branch's operands.
TEXT ·tanh512(SB), NOSPLIT, $0-24
	MOVQ v+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ k+16(FP), SI
	SHLQ $3, CX
	XORQ AX, AX
	TESTQ CX, CX
	JE   zdone
	VBROADCASTSD ONE(SI), Z7
	VBROADCASTSD TWO(SI), Z8

zloop:
	VMOVUPD      (DI)(AX*1), Z0      // x
	VPBROADCASTQ ABS(SI), Z1
	VPANDQ       Z1, Z0, Z1          // z = |x|
	VBROADCASTSD MID(SI), Z14
	VCMPPD       $0x1d, Z14, Z1, K1  // z >= 0.625: the exponential's lanes
	KMOVW        K1, BX
	TESTQ        BX, BX
	JEQ          zrational
	CMPQ         BX, $0xff
	JEQ          zexp

	// both branches
	RATIONAL
	EXPPLUS1
	VBLENDMPD Z8, Z5, K1, Z5 // numerator: 2 or the rational one
	VBLENDMPD Z2, Z18, K1, Z18 // denominator: e^{2z}+1 or the rational one
	VDIVPD    Z18, Z5, Z5
	VMOVAPD   Z5, Z2
	RATDONE
	EXPDONE
	JMP zstore

zrational:
	RATIONAL
	VDIVPD Z18, Z5, Z5
	RATDONE
	JMP    zstore

zexp:
	EXPPLUS1
	VDIVPD Z2, Z8, Z2
	EXPDONE

zstore:
	VMOVUPD Z15, (DI)(AX*1)
	ADDQ    $64, AX
	CMPQ    AX, CX
	JLT     zloop

zdone:
	VZEROUPPER
	RET
