//go:build amd64 && !purego

#include "textflag.h"

// Offsets in pairTables (prefilter_vec.go).
#define NIB 256
#define CTLMAX 288
#define TAB 320
#define ESC 352
#define DEL 384

// BLOCK sets Y3 to the flags of the 32 positions at (DX): nonzero where a
// byte shares a bucket with the byte after it (two sets of eight buckets,
// tables in Y8-Y15), or is a control byte (up to 0x1f but tab and ESC, or
// 0x7f). It uses Y0-Y7.
#define BLOCK \
	VMOVDQU  (DX), Y0;          \
	VMOVDQU  1(DX), Y1;         \
	VPSRLW   $4, Y0, Y2;        \
	VPAND    NIB(DI), Y2, Y2;   \
	VPAND    NIB(DI), Y0, Y3;   \
	VPSHUFB  Y3, Y8, Y4;        \
	VPSHUFB  Y2, Y9, Y5;        \
	VPAND    Y5, Y4, Y4;        \
	VPSHUFB  Y3, Y12, Y5;       \
	VPSHUFB  Y2, Y13, Y6;       \
	VPAND    Y6, Y5, Y5;        \
	VPSRLW   $4, Y1, Y2;        \
	VPAND    NIB(DI), Y2, Y2;   \
	VPAND    NIB(DI), Y1, Y3;   \
	VPSHUFB  Y3, Y10, Y6;       \
	VPSHUFB  Y2, Y11, Y7;       \
	VPAND    Y7, Y6, Y6;        \
	VPAND    Y6, Y4, Y4;        \
	VPSHUFB  Y3, Y14, Y6;       \
	VPSHUFB  Y2, Y15, Y7;       \
	VPAND    Y7, Y6, Y6;        \
	VPAND    Y6, Y5, Y5;        \
	VPOR     Y5, Y4, Y4;        \
	VPMINUB  CTLMAX(DI), Y0, Y5; \
	VPCMPEQB Y5, Y0, Y5;        \
	VPCMPEQB TAB(DI), Y0, Y6;   \
	VPCMPEQB ESC(DI), Y0, Y7;   \
	VPOR     Y7, Y6, Y6;        \
	VPANDN   Y5, Y6, Y5;        \
	VPCMPEQB DEL(DI), Y0, Y6;   \
	VPOR     Y6, Y5, Y5;        \
	VPOR     Y5, Y4, Y3

// MASK sets CX to the mask of the nonzero bytes of Y3.
#define MASK \
	VPXOR     Y6, Y6, Y6; \
	VPCMPEQB  Y6, Y3, Y3; \
	VPMOVMSKB Y3, CX;     \
	NOTL      CX

// func pairScanAll(s string, t *pairTables, out *[pairOut]uint64) (n, next int)
TEXT ·pairScanAll(SB), NOSPLIT, $0-48
	MOVQ s_base+0(FP), SI
	MOVQ s_len+8(FP), BX
	MOVQ t+16(FP), DI
	MOVQ out+24(FP), R8
	VMOVDQU 0(DI), Y8    // loA
	VMOVDQU 32(DI), Y9   // hiA
	VMOVDQU 64(DI), Y10  // loB
	VMOVDQU 96(DI), Y11  // hiB
	VMOVDQU 128(DI), Y12 // loA2
	VMOVDQU 160(DI), Y13 // hiA2
	VMOVDQU 192(DI), Y14 // loB2
	VMOVDQU 224(DI), Y15 // hiB2
	XORQ AX, AX          // offset of the block
	XORQ R9, R9          // entries written
	LEAQ -33(BX), R10    // the last offset a whole block (and a byte) fits at

	// Each block's entry is written at out[R9] whether or not it has a
	// flagged position, and R9 moves on only when it has one: no branch
	// on the flags, which a line takes or not at random.
loop:
	CMPQ AX, R10
	JGT  tail
	LEAQ (SI)(AX*1), DX
	BLOCK
	MASK
	MOVQ   AX, DX
	SHLQ   $32, DX
	ORQ    CX, DX
	MOVQ   DX, (R8)(R9*8)
	XORL   R11, R11
	TESTL  CX, CX
	SETNE  R11B
	ADDQ   R11, R9
	ADDQ   $32, AX
	CMPQ   R9, $16
	JLT    loop
	JMP    done

tail:
	// Positions AX..len-2 are left (those with a byte after them): the
	// block at len-33 holds them, and the positions before AX are masked
	// out (1 to 31 of them). A string shorter than a block is left to Go.
	LEAQ 1(AX), DX
	CMPQ DX, BX
	JGE  done
	CMPQ BX, $33
	JLT  done
	LEAQ (SI)(R10*1), DX
	BLOCK
	MASK
	MOVL  CX, R11
	MOVQ  AX, CX
	SUBQ  R10, CX
	SHRL  CX, R11
	SHLL  CX, R11
	LEAQ  -1(BX), AX // Go looks at the last byte
	TESTL R11, R11
	JZ    done
	MOVQ  R10, DX
	SHLQ  $32, DX
	ORQ   R11, DX
	MOVQ  DX, (R8)(R9*8)
	INCQ  R9
	JMP   done

done:
	VZEROUPPER
	MOVQ R9, n+32(FP)
	MOVQ AX, next+40(FP)
	RET

// func cpuid(leaf, sub uint32) (a, b, c, d uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, a+8(FP)
	MOVL BX, b+12(FP)
	MOVL CX, c+16(FP)
	MOVL DX, d+20(FP)
	RET

// func xgetbv0() (a, d uint32)
TEXT ·xgetbv0(SB), NOSPLIT, $0-8
	MOVL $0, CX
	BYTE $0x0f; BYTE $0x01; BYTE $0xd0 // XGETBV
	MOVL AX, a+0(FP)
	MOVL DX, d+4(FP)
	RET

// Offsets in junkConstTable (junkscan.go).
#define J_NL 0
#define J_STAR 32
#define J_BLANK 64
#define J_LO 96
#define J_HI 128
#define J_LOW4 160

// func junkScanAVX2(b []byte, c *junkConstTable, st *junkStats) int
TEXT ·junkScanAVX2(SB), NOSPLIT, $0-48
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	MOVQ c+24(FP), DI
	MOVQ st+32(FP), R13
	XORQ AX, AX   // offset of the block
	XORQ R8, R8   // weighing bytes
	MOVQ $-1, R9  // first NUL
	XORQ R10, R10 // star starts
	XORQ R11, R11 // hole bits
	XORQ R12, R12 // NUL mask of the block before
	VMOVDQU J_LO(DI), Y8
	VMOVDQU J_HI(DI), Y9
	VMOVDQU J_LOW4(DI), Y10
	VPXOR   Y11, Y11, Y11

jloop:
	LEAQ 35(AX), DX
	CMPQ DX, BX
	JHI  jend
	VMOVDQU (SI)(AX*1), Y0

	// newline: CX = mask of the positions before it (all when none)
	VPCMPEQB J_NL(DI), Y0, Y1
	VPMOVMSKB Y1, CX
	TESTL CX, CX
	JNZ   jnl
	MOVL  $-1, CX
	JMP   jmasked
jnl:
	BSFL  CX, DX
	LEAQ  (AX)(DX*1), R14
	MOVQ  R14, 0(R13) // st.nl
	MOVL  DX, CX
	MOVL  $1, R14
	SHLL  CX, R14
	DECL  R14         // (1<<nl)-1; nl < 32
	MOVL  R14, CX
jmasked:

	// weighing bytes: c <= 0x1f but tab, newline, CR, FF, ESC; or 0x7f,
	// by nibble: lo[c&15] & hi[c>>4] != 0 (junkConstTable)
	VPSRLW    $4, Y0, Y2
	VPAND     Y10, Y2, Y2
	VPAND     Y10, Y0, Y3
	VPSHUFB   Y3, Y8, Y3
	VPSHUFB   Y2, Y9, Y2
	VPAND     Y3, Y2, Y2
	VPCMPEQB  Y11, Y2, Y2
	VPMOVMSKB Y2, R14
	NOTL      R14
	ANDL      CX, R14
	POPCNTL  R14, R14
	ADDQ     R14, R8

	// `*** ` starts (none when the block holds no `*` before the newline)
	VPCMPEQB J_STAR(DI), Y0, Y2
	VPMOVMSKB Y2, R14
	TESTL    CX, R14
	JZ       jnostar
	VMOVDQU  1(SI)(AX*1), Y5
	VMOVDQU  2(SI)(AX*1), Y6
	VMOVDQU  3(SI)(AX*1), Y7
	VPCMPEQB J_STAR(DI), Y5, Y3
	VPAND    Y3, Y2, Y2
	VPCMPEQB J_STAR(DI), Y6, Y3
	VPAND    Y3, Y2, Y2
	VPCMPEQB J_BLANK(DI), Y7, Y3
	VPAND    Y3, Y2, Y2
	VPMOVMSKB Y2, R14
	ANDL     CX, R14
	ORQ      R14, R10
jnostar:

	// NULs: the first one, and runs of 8 across this block and the one
	// before (bit p of w&w>>1&…&w>>7 is a run from p). A block without a
	// NUL adds no run: the runs of the block before alone were found with
	// the block before it.
	VPCMPEQB  Y11, Y0, Y3
	VPMOVMSKB Y3, DX
	ANDL      CX, DX
	TESTL     DX, DX
	JNZ       jnul
	XORQ      R12, R12
	JMP       jnext
jnul:
	CMPQ      R9, $0
	JGE       jnonul
	BSFL      DX, R14
	LEAQ      (AX)(R14*1), R9
jnonul:
	MOVQ DX, R14
	SHLQ $32, R14
	ORQ  R12, R14
	MOVQ DX, R12
	MOVQ R14, DX
	SHRQ $1, DX
	ANDQ DX, R14
	MOVQ R14, DX
	SHRQ $2, DX
	ANDQ DX, R14
	MOVQ R14, DX
	SHRQ $4, DX
	ANDQ DX, R14
	ORQ  R14, R11

jnext:
	ADDQ $32, AX
	CMPL CX, $-1
	JEQ  jloop

jend:
	VZEROUPPER
	MOVQ R9, 8(R13)  // st.nul
	MOVQ R8, 16(R13) // st.ctl
	XORQ DX, DX
	TESTQ R11, R11
	SETNE DL
	MOVQ DX, 24(R13) // st.hole
	XORQ DX, DX
	TESTQ R10, R10
	SETNE DL
	MOVQ DX, 32(R13) // st.star
	MOVQ AX, ret+40(FP)
	RET

// func zeroBlockAVX2(b []byte) int
// The offset of the first 32-byte block of b (from b[0], 32 bytes at a
// time) holding an eight-byte word of NULs at 0, 8, 16 or 24 in it, or
// the end of the whole blocks; 64 bytes a round while they fit.
TEXT ·zeroBlockAVX2(SB), NOSPLIT, $0-32
	MOVQ  b_base+0(FP), SI
	MOVQ  b_len+8(FP), BX
	XORQ  AX, AX
	VPXOR Y0, Y0, Y0

zloop:
	LEAQ     64(AX), DX
	CMPQ     DX, BX
	JHI      zone
	VPCMPEQQ (SI)(AX*1), Y0, Y1
	VPCMPEQQ 32(SI)(AX*1), Y0, Y2
	VPOR     Y1, Y2, Y3
	VPTEST   Y3, Y3
	JNZ      zfound
	MOVQ     DX, AX
	JMP      zloop

zfound:
	VPTEST Y1, Y1
	JNZ    zdone
	ADDQ   $32, AX
	JMP    zdone

zone:
	LEAQ     32(AX), DX
	CMPQ     DX, BX
	JHI      zdone
	VPCMPEQQ (SI)(AX*1), Y0, Y1
	VPTEST   Y1, Y1
	JNZ      zdone
	MOVQ     DX, AX

zdone:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

// vecPattern's layout (fastrun.go; TestVecPatternLayout checks it)
#define VP_N 0
#define VP_NB 8
#define VP_OFF 16
#define VP_PAT 280
#define VP_DIG 1336

// func countRepeatsAVX2(buf []byte, vp *vecPattern) int
TEXT ·countRepeatsAVX2(SB), NOSPLIT, $0-40
	MOVQ buf_base+0(FP), SI
	MOVQ buf_len+8(FP), BX
	MOVQ vp+24(FP), DI
	MOVQ VP_N(DI), R8
	MOVQ VP_NB(DI), R9
	XORQ AX, AX // lines counted
	XORQ DX, DX // offset of the line
	MOVQ $0x9e3779b97f4a7c15, R15
	MOVQ         $0x3030303030303030, CX // '0', 32 times
	VMOVQ        CX, X13
	VPBROADCASTQ X13, Y13
	MOVQ         $0x0909090909090909, CX // 9, 32 times
	VMOVQ        CX, X14
	VPBROADCASTQ X14, Y14
	LEAQ VP_OFF(DI), R11
	LEAQ VP_PAT(DI), R12
	LEAQ VP_DIG(DI), R13

rloop:
	// a line of n bytes and its newline
	LEAQ (DX)(R8*1), CX
	CMPQ CX, BX
	JAE  rdone
	CMPB (SI)(CX*1), $10
	JNE  rdone
	VPXOR Y7, Y7, Y7 // the stop hash's words, XORed
	XORQ  R10, R10   // block

bloop:
	MOVQ      (R11)(R10*8), CX
	ADDQ      DX, CX
	VMOVDQU   (SI)(CX*1), Y0
	VPXOR     Y0, Y7, Y7
	MOVQ      R10, R14
	SHLQ      $5, R14
	VPCMPEQB  (R12)(R14*1), Y0, Y1
	VPMOVMSKB Y1, CX
	CMPL      CX, $-1
	JEQ       bnext
	// bytes that differ: digits where the pattern has digits
	VPSUBB    Y13, Y0, Y2
	VPMINUB   Y14, Y2, Y3
	VPCMPEQB  Y3, Y2, Y3
	VPAND     (R13)(R14*1), Y3, Y3
	VPOR      Y1, Y3, Y3
	VPMOVMSKB Y3, CX
	CMPL      CX, $-1
	JNE       rdone

bnext:
	INCQ R10
	CMPQ R10, R9
	JB   bloop

	// one more line; stop after it when its hash says so (stopHash)
	INCQ         AX
	VEXTRACTI128 $1, Y7, X8
	VPXOR        X8, X7, X7
	VPSHUFD      $0x4e, X7, X8
	VPXOR        X8, X7, X7
	VMOVQ        X7, CX
	IMULQ        R15, CX
	SHRQ         $56, CX
	JZ           rdone
	LEAQ         1(DX)(R8*1), DX
	JMP          rloop

rdone:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

// func newlineBitsAVX2(b []byte, bits []uint64)
// For each whole 64-byte chunk k of b (len(bits) of them at most), bits[k]
// gets bit i set where b[64k+i] is a newline.
TEXT ·newlineBitsAVX2(SB), NOSPLIT, $0-48
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	MOVQ bits_base+24(FP), DI
	MOVQ bits_len+32(FP), DX
	SHRQ $6, CX
	CMPQ CX, DX
	CMOVQHI DX, CX
	MOVL $0x0a, AX
	MOVQ AX, X0
	VPBROADCASTB X0, Y0

nbloop:
	TESTQ CX, CX
	JZ    nbdone
	VPCMPEQB  (SI), Y0, Y1
	VPCMPEQB  32(SI), Y0, Y2
	VPMOVMSKB Y1, AX
	VPMOVMSKB Y2, DX
	SHLQ      $32, DX
	ORQ       DX, AX
	MOVQ      AX, (DI)
	ADDQ      $64, SI
	ADDQ      $8, DI
	DECQ      CX
	JMP       nbloop

nbdone:
	VZEROUPPER
	RET
