package dwarfindex

import ()

// DWARF constants used by the reader (DWARF 4 and 5, GNU extensions).
const (
	dwTagCompileUnit  = 0x11
	dwTagPartialUnit  = 0x3c
	dwTagSkeletonUnit = 0x4a
	dwTagSubprogram   = 0x2e
	dwTagInlined      = 0x1d
	dwTagNamespace    = 0x39

	dwAtSibling         = 0x01
	dwAtName            = 0x03
	dwAtStmtList        = 0x10
	dwAtLowPC           = 0x11
	dwAtHighPC          = 0x12
	dwAtCompDir         = 0x1b
	dwAtAbstractOrigin  = 0x31
	dwAtDeclaration     = 0x3c
	dwAtSpecification   = 0x47
	dwAtRanges          = 0x55
	dwAtCallColumn      = 0x57
	dwAtCallFile        = 0x58
	dwAtCallLine        = 0x59
	dwAtLinkageName     = 0x6e
	dwAtStrOffsetsBase  = 0x72
	dwAtAddrBase        = 0x73
	dwAtRnglistsBase    = 0x74
	dwAtDwoName         = 0x76
	dwAtMIPSLinkageName = 0x2007
	dwAtGNUDwoName      = 0x2130
	dwAtGNUDwoID        = 0x2131
	dwAtGNURangesBase   = 0x2132
	dwAtGNUAddrBase     = 0x2133

	dwFormAddr          = 0x01
	dwFormBlock2        = 0x03
	dwFormBlock4        = 0x04
	dwFormData2         = 0x05
	dwFormData4         = 0x06
	dwFormData8         = 0x07
	dwFormString        = 0x08
	dwFormBlock         = 0x09
	dwFormBlock1        = 0x0a
	dwFormData1         = 0x0b
	dwFormFlag          = 0x0c
	dwFormSdata         = 0x0d
	dwFormStrp          = 0x0e
	dwFormUdata         = 0x0f
	dwFormRefAddr       = 0x10
	dwFormRef1          = 0x11
	dwFormRef2          = 0x12
	dwFormRef4          = 0x13
	dwFormRef8          = 0x14
	dwFormRefUdata      = 0x15
	dwFormIndirect      = 0x16
	dwFormSecOffset     = 0x17
	dwFormExprloc       = 0x18
	dwFormFlagPresent   = 0x19
	dwFormStrx          = 0x1a
	dwFormAddrx         = 0x1b
	dwFormRefSup4       = 0x1c
	dwFormStrpSup       = 0x1d
	dwFormData16        = 0x1e
	dwFormLineStrp      = 0x1f
	dwFormRefSig8       = 0x20
	dwFormImplicitConst = 0x21
	dwFormLoclistx      = 0x22
	dwFormRnglistx      = 0x23
	dwFormRefSup8       = 0x24
	dwFormStrx1         = 0x25
	dwFormStrx2         = 0x26
	dwFormStrx3         = 0x27
	dwFormStrx4         = 0x28
	dwFormAddrx1        = 0x29
	dwFormAddrx2        = 0x2a
	dwFormAddrx3        = 0x2b
	dwFormAddrx4        = 0x2c
	dwFormGNUAddrIndex  = 0x1f01
	dwFormGNUStrIndex   = 0x1f02
	dwFormGNURefAlt     = 0x1f20
	dwFormGNUStrpAlt    = 0x1f21
)

// dwData is the DWARF of one ELF image: section bytes (mmap slices or
