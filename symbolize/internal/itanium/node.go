package itanium

// kind is the type of an AST node. Every kind mirrors one AST type of the
// reference demangler (github.com/ianlancetaylor/demangle), because the
// reference's output depends on the exact shape of its tree (which nodes
// exist, which are shared, which are copied).
type kind uint8

const (
	kName          kind = iota // identifier: input[ls:ln]
	kConst                     // constant Name: constStrs[num]
	kBuiltin                   // BuiltinType: constStrs[num]
	kAbbrev                    // St Sa Sb Ss Si So Sd abbreviation (the reference's shared subAST value); num = letter
	kVerbose                   // Ss Si So Sd in a constructor/destructor prefix (the reference's verboseAST value); num = letter
	kTyped                     // a = name, b = type
	kQualified                 // a = scope, b = name; fLocal for a <local-name>
	kTemplate                  // a = name, list = args
	kTemplateParam             // num = index, b = template node (not a child)
	kLambdaAuto                // num = index
	kTWQ                       // TypeWithQualifiers: a = base, q = qualifiers
	kMWQ                       // MethodWithQualifiers: a = method, q = qualifiers, ref = ref-qualifier
	kPointer                   // a = base
	kRef                       // a = base
	kRRef                      // a = base
	kArray                     // a = dimension, b = element
	kFunction                  // a = return type or -1, list = params; fForLocal
	kPtrMem                    // a = class, b = member
	kOperator                  // num = index into operators
	kCast                      // a = type
	kCtor                      // a = name, b = inheriting base or -1
	kDtor                      // a = name
	kTagged                    // a = name, b = tag
	kPackExp                   // a = base, b = argument pack or -1 (not a child)
	kArgPack                   // list = args
	kExprList                  // list = exprs
	kLiteral                   // a = type, input[ls:ln] = value; fNeg
	kDefaultArg                // a = arg, num
	kClosure                   // list = param types, num
	kUnnamed                   // num
	kClone                     // a = base, input[ls:ln] = suffix
	kSpecial                   // a = value, num = prefix index into specialPrefixes
	kSpecial2                  // a, b = values, num = prefix index
	kUnaryAddr                 // the unary & expression: a = operand
	kFunctionParam             // function parameter in an expression: num (0 = this)
)

// Node flags. The "contains" flags are propagated from children to
// parents when a node is made, and decide which subtrees the substitution
// copy and the simplify pass must visit.
const (
	fTP       uint8 = 1 << iota // contains a TemplateParam
	fLA                         // contains a LambdaAuto outside a closure
	fPE                         // contains a PackExpansion
	fAP                         // contains an ArgumentPack
	fLocal                      // kQualified: parsed as a <local-name>
	fForLocal                   // kFunction: function type of a local name's function
	fNeg                        // kLiteral: negative value
	fSimp                       // contains a node made by simplify: a later simplify pass must visit it

	fInherit = fTP | fLA | fPE | fAP | fSimp
	fVisit   = fTP | fPE | fSimp // what the simplify pass visits
)

// node is one AST node in the Demangler's arena. Children are int32
// indexes into the arena, lists are ranges of the lists slice.
type node struct {
	kind  kind
	flags uint8
	ref   uint8 // kMWQ ref-qualifier: 0, 1 (&), 2 (&&)
	stack uint8 // how often the node is on the printing stack
	q     uint32
	a, b  int32
	ls    int32 // list start, or string start
	ln    int32 // list length, or string end
	num   int32
	seen  uint32 // pass stamp for the substitution copy and the simplify pass
	seen2 uint32 // pass stamp for pack expansion (nested in simplify)
}

// Constant strings. The first block are builtin type names.
const (
	cSignedChar = iota
	cBool
	cChar
	cDouble
	cLongDouble
	cFloat
	cFloat128
	cUnsignedChar
	cInt
	cUnsignedInt
	cLong
	cUnsignedLong
	cInt128
	cUnsignedInt128
	cShort
	cUnsignedShort
	cVoid
	cWchar
	cLongLong
	cUnsignedLongLong
	cEllipsis
	cDecimal32
	cDecimal64
	cDecimal128
	cHalf
	cChar8
	cChar16
	cChar32
	cNullptr
	// Names.
	cAuto
	cDecltypeAuto
	cStringLiteral
	cAnonNamespace
	cEmpty
	cBasicString
	cBasicIstream
	cBasicOstream
	cBasicIostream
	cAllocator
	cBasicStringShort
	cString
	cIstream
	cOstream
	cIostream
)

var constStrs = [...]string{
	cSignedChar:       "signed char",
	cBool:             "bool",
	cChar:             "char",
	cDouble:           "double",
	cLongDouble:       "long double",
	cFloat:            "float",
	cFloat128:         "__float128",
	cUnsignedChar:     "unsigned char",
	cInt:              "int",
	cUnsignedInt:      "unsigned int",
	cLong:             "long",
	cUnsignedLong:     "unsigned long",
	cInt128:           "__int128",
	cUnsignedInt128:   "unsigned __int128",
	cShort:            "short",
	cUnsignedShort:    "unsigned short",
	cVoid:             "void",
	cWchar:            "wchar_t",
	cLongLong:         "long long",
	cUnsignedLongLong: "unsigned long long",
	cEllipsis:         "...",
	cDecimal32:        "decimal32",
	cDecimal64:        "decimal64",
	cDecimal128:       "decimal128",
	cHalf:             "half",
	cChar8:            "char8_t",
	cChar16:           "char16_t",
	cChar32:           "char32_t",
	cNullptr:          "decltype(nullptr)",
	cAuto:             "auto",
	cDecltypeAuto:     "decltype(auto)",
	cStringLiteral:    "string literal",
	cAnonNamespace:    "(anonymous namespace)",
	cEmpty:            "",
	cBasicString:      "basic_string",
	cBasicIstream:     "basic_istream",
	cBasicOstream:     "basic_ostream",
	cBasicIostream:    "basic_iostream",
	cAllocator:        "allocator",
	cBasicStringShort: "basic_string",
	cString:           "string",
	cIstream:          "istream",
	cOstream:          "ostream",
	cIostream:         "iostream",
}

// builtinCode maps a one-letter builtin type code to its constant, -1 if
// the letter is not a builtin type.
var builtinCode = [256]int8{
	'a': cSignedChar + 1, 'b': cBool + 1, 'c': cChar + 1, 'd': cDouble + 1,
	'e': cLongDouble + 1, 'f': cFloat + 1, 'g': cFloat128 + 1, 'h': cUnsignedChar + 1,
	'i': cInt + 1, 'j': cUnsignedInt + 1, 'l': cLong + 1, 'm': cUnsignedLong + 1,
	'n': cInt128 + 1, 'o': cUnsignedInt128 + 1, 's': cShort + 1, 't': cUnsignedShort + 1,
	'v': cVoid + 1, 'w': cWchar + 1, 'x': cLongLong + 1, 'y': cUnsignedLongLong + 1,
	'z': cEllipsis + 1,
} // stored +1 so that the zero value means "not a builtin"

// abbrevShort and abbrevVerbose are the printed forms of the standard
// substitutions, as the reference prints them (its subAST and verboseAST).
func abbrevShort(c byte) string {
	switch c {
	case 't':
		return "std"
	case 'a':
		return "std::allocator"
	case 'b':
		return "std::basic_string"
	case 's':
		return "std::string"
	case 'i':
		return "std::istream"
	case 'o':
		return "std::ostream"
	case 'd':
		return "std::iostream"
	}
	return ""
}

func abbrevVerbose(c byte) string {
	switch c {
	case 's':
		return "std::basic_string<char, std::char_traits<char>, std::allocator<char> >"
	case 'i':
		return "std::basic_istream<char, std::char_traits<char> >"
	case 'o':
		return "std::basic_ostream<char, std::char_traits<char> >"
	case 'd':
		return "std::basic_iostream<char, std::char_traits<char> >"
	}
	return abbrevShort(c)
}

// abbrevLast is the unqualified name a constructor or destructor takes
// from a standard substitution (the reference's getLast).
func abbrevLast(c byte) int32 {
	switch c {
	case 's':
		return cBasicString
	case 'i':
		return cBasicIstream
	case 'o':
		return cBasicOstream
	case 'd':
		return cBasicIostream
	}
	return -1
}

// Qualifier codes, packed three bits each into node.q, most recently
// parsed (and first printed) in the low bits.
const (
	qConst = 1 + iota
	qVolatile
	qRestrict
	qTransactionSafe
	qNoexcept
	maxQuals = 10
)

var qualNames = [...]string{
	qConst:           "const",
	qVolatile:        "volatile",
	qRestrict:        "restrict",
	qTransactionSafe: "transaction_safe",
	qNoexcept:        "noexcept",
}

// operator is a two-letter operator code and the name the reference gives
// it (trailing spaces included: the printer trims them).
type operator struct {
	code string
	name string
}

var operators = [...]operator{
	{"aN", "&="}, {"aS", "="}, {"aa", "&&"}, {"ad", "&"}, {"an", "&"},
	{"at", "alignof "}, {"aw", "co_await "}, {"az", "alignof "},
	{"cc", "const_cast"}, {"cl", "()"}, {"cp", "() "}, {"cm", ","}, {"co", "~"},
	{"dV", "/="}, {"dX", "[...]="}, {"da", "delete[] "}, {"dc", "dynamic_cast"},
	{"de", "*"}, {"di", "="}, {"dl", "delete "}, {"ds", ".*"}, {"dt", "."},
	{"dv", "/"}, {"dx", "]="}, {"eO", "^="}, {"eo", "^"}, {"eq", "=="},
	{"fl", "..."}, {"fr", "..."}, {"fL", "..."}, {"fR", "..."},
	{"ge", ">="}, {"gs", "::"}, {"gt", ">"}, {"ix", "[]"}, {"lS", "<<="},
	{"le", "<="}, {"ls", "<<"}, {"lt", "<"}, {"mI", "-="}, {"mL", "*="},
	{"mi", "-"}, {"ml", "*"}, {"mm", "--"}, {"na", "new[]"}, {"ne", "!="},
	{"ng", "-"}, {"nt", "!"}, {"nw", "new"}, {"nx", "noexcept"}, {"oR", "|="},
	{"oo", "||"}, {"or", "|"}, {"pL", "+="}, {"pl", "+"}, {"pm", "->*"},
	{"pp", "++"}, {"ps", "+"}, {"pt", "->"}, {"qu", "?"}, {"rM", "%="},
	{"rS", ">>="}, {"rc", "reinterpret_cast"}, {"rm", "%"}, {"rs", ">>"},
	{"sP", "sizeof..."}, {"sZ", "sizeof..."}, {"sc", "static_cast"},
	{"ss", "<=>"}, {"st", "sizeof "}, {"sz", "sizeof "}, {"te", "typeid "},
	{"ti", "typeid "}, {"tr", "throw"}, {"tw", "throw "},
}

// Special name prefixes.
const (
	spVtable = iota
	spVTT
	spTypeinfo
	spTypeinfoName
	spNonVirtualThunk
	spVirtualThunk
	spCovariantThunk
	spConstructionVtable
	spTypeinfoFn
	spJavaClass
	spTLSInit
	spTLSWrapper
	spGuard
	spRefTemp
	spHiddenAlias
	spNonTransactionClone
	spTransactionClone
)

var specialPrefixes = [...]string{
	spVtable:              "vtable for ",
	spVTT:                 "VTT for ",
	spTypeinfo:            "typeinfo for ",
	spTypeinfoName:        "typeinfo name for ",
	spNonVirtualThunk:     "non-virtual thunk to ",
	spVirtualThunk:        "virtual thunk to ",
	spCovariantThunk:      "covariant return thunk to ",
	spConstructionVtable:  "construction vtable for ",
	spTypeinfoFn:          "typeinfo fn for ",
	spJavaClass:           "java Class for ",
	spTLSInit:             "TLS init function for ",
	spTLSWrapper:          "TLS wrapper function for ",
	spGuard:               "guard variable for ",
	spRefTemp:             "reference temporary for ",
	spHiddenAlias:         "hidden alias for ",
	spNonTransactionClone: "non-transaction clone for ",
	spTransactionClone:    "transaction clone for ",
}
