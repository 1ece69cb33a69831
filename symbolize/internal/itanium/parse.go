package itanium

import "strings"

// The parser mirrors the reference's state methods (demangle.go) one for
// one, including the order in which substitution candidates are recorded
// and the places where the reference mutates nodes it already built.
// Constructs this package leaves to the reference call d.fail, which abandons the
// name (the caller then uses the reference).

// failure is the panic value used to abandon a name; AppendDemangle
// recovers it.
type failure struct{}

func (d *Demangler) fail() { panic(failure{}) }

const (
	maxDepth  = 200     // parse and print recursion bound
	maxInput  = 1 << 16 // longest mangled name handled
	maxNodes  = 1 << 16 // arena bound (about 2.4 MB of nodes)
	maxOutput = 1 << 16 // the reference truncates longer output (MaxLength(16))
)

func (d *Demangler) enter() {
	d.depth++
	if d.depth > maxDepth {
		d.fail()
	}
}

func (d *Demangler) peek() byte {
	if d.pos < len(d.in) {
		return d.in[d.pos]
	}
	return 0
}

func (d *Demangler) peek1() byte {
	if d.pos+1 < len(d.in) {
		return d.in[d.pos+1]
	}
	return 0
}

func (d *Demangler) eof() bool { return d.pos >= len(d.in) }

func (d *Demangler) expect(c byte) {
	if d.pos >= len(d.in) || d.in[d.pos] != c {
		d.fail()
	}
	d.pos++
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

// newNode appends a node and returns its index; flags of children a and
// b are inherited.
func (d *Demangler) newNode(k kind, a, b int32) int32 {
	if len(d.nodes) >= maxNodes {
		d.fail()
	}
	f := d.mark
	if a >= 0 {
		f |= d.nodes[a].flags & fInherit
	}
	if b >= 0 && k != kTemplateParam && k != kPackExp {
		f |= d.nodes[b].flags & fInherit
	}
	d.nodes = append(d.nodes, node{kind: k, flags: f, a: a, b: b, ls: -1})
	return int32(len(d.nodes) - 1)
}

// finishList moves d.tmp[mark:] into the lists arena and returns its
// range and the union of the flags of its elements.
func (d *Demangler) finishList(mark int) (start, n int32, f uint8) {
	start = int32(len(d.lists))
	for _, x := range d.tmp[mark:] {
		f |= d.nodes[x].flags & fInherit
	}
	d.lists = append(d.lists, d.tmp[mark:]...)
	n = int32(len(d.tmp) - mark)
	d.tmp = d.tmp[:mark]
	return
}

func (d *Demangler) newList(k kind, a int32, mark int) int32 {
	ls, ln, f := d.finishList(mark)
	id := d.newNode(k, a, -1)
	nd := &d.nodes[id]
	nd.ls, nd.ln = ls, ln
	nd.flags |= f
	return id
}

func (d *Demangler) constNode(k kind, c int32) int32 {
	id := d.newNode(k, -1, -1)
	d.nodes[id].num = c
	return id
}

func (d *Demangler) addSub(id int32) {
	if len(d.subs) >= maxNodes {
		d.fail()
	}
	d.subs = append(d.subs, id)
}

// encoding parses <encoding>; local reports a <local-name>'s function.
func (d *Demangler) encoding(local bool) int32 {
	d.enter()
	defer func() { d.depth-- }()
	if d.eof() {
		d.fail()
	}
	if c := d.peek(); c == 'G' || c == 'T' {
		return d.specialName()
	}
	a := d.name()
	a = d.simplify(a)
	if d.eof() || d.peek() == 'E' {
		return a
	}
	mwq := int32(-1)
	if d.nodes[a].kind == kMWQ {
		mwq = a
	}
	tmpl := d.findTemplate(a)
	oldLL := 0
	if tmpl >= 0 {
		d.tmpls = append(d.tmpls, tmpl)
		oldLL = d.lambdaLevel
		d.lambdaLevel = 0
	}
	if strings.HasPrefix(d.in[d.pos:], "Ua9enable_ifI") {
		d.fail()
	}
	ft := d.bareFunctionType(d.hasReturnType(a))
	if d.peek() == 'Q' {
		d.fail()
	}
	if tmpl >= 0 {
		d.tmpls = d.tmpls[:len(d.tmpls)-1]
		d.lambdaLevel = oldLL
	}
	ft = d.simplify(ft)
	if local && d.nodes[ft].kind == kFunction {
		d.nodes[ft].flags |= fForLocal
	}
	if mwq >= 0 {
		a = d.nodes[mwq].a
		d.nodes[mwq].a = ft
		d.nodes[mwq].flags |= d.nodes[ft].flags & fInherit
		ft = mwq
	}
	if n := &d.nodes[a]; n.kind == kQualified && n.flags&fLocal != 0 {
		holder, p := a, d.nodes[a].b
		if d.nodes[p].kind == kDefaultArg {
			holder, p = p, d.nodes[p].a
		}
		if d.nodes[p].kind == kMWQ {
			m := p
			if d.nodes[holder].kind == kQualified {
				d.nodes[holder].b = d.nodes[m].a
			} else {
				d.nodes[holder].a = d.nodes[m].a
			}
			d.nodes[m].a = ft
			d.nodes[m].flags |= d.nodes[ft].flags & fInherit
			ft = m
		}
	}
	return d.newNode(kTyped, a, ft)
}

// findTemplate mirrors the reference's findTemplate closure in encoding.
func (d *Demangler) findTemplate(a int32) int32 {
	for i := 0; i < maxDepth; i++ {
		n := &d.nodes[a]
		switch n.kind {
		case kTemplate:
			return a
		case kQualified:
			if n.flags&fLocal != 0 || d.nodes[n.b].kind == kCtor {
				a = n.b
				continue
			}
			return -1
		case kMWQ:
			a = n.a
		case kCtor:
			if n.b < 0 {
				return -1
			}
			a = n.b
		default:
			return -1
		}
	}
	d.fail()
	return -1
}

func (d *Demangler) hasReturnType(a int32) bool {
	for i := 0; i < maxDepth; i++ {
		n := &d.nodes[a]
		switch n.kind {
		case kQualified:
			if n.flags&fLocal == 0 {
				return false
			}
			a = n.b
		case kTemplate:
			return !d.isCDtorConversion(n.a)
		case kTWQ, kMWQ:
			a = n.a
		default:
			return false
		}
	}
	d.fail()
	return false
}

func (d *Demangler) isCDtorConversion(a int32) bool {
	for i := 0; i < maxDepth; i++ {
		n := &d.nodes[a]
		switch n.kind {
		case kQualified:
			a = n.b
		case kCtor, kDtor, kCast:
			return true
		default:
			return false
		}
	}
	d.fail()
	return false
}

func (d *Demangler) taggedName(a int32) int32 {
	for d.peek() == 'B' {
		d.pos++
		tag := d.sourceName()
		a = d.newNode(kTagged, a, tag)
	}
	return a
}

func (d *Demangler) name() int32 {
	d.enter()
	defer func() { d.depth-- }()
	if d.eof() {
		d.fail()
	}
	switch d.peek() {
	case 'N':
		return d.nestedName()
	case 'Z':
		return d.localName()
	case 'U':
		a, _ := d.unqualifiedName()
		return a
	case 'S':
		if d.pos+1 >= len(d.in) {
			d.fail()
		}
		var a int32
		subst := false
		if d.peek1() == 't' {
			d.pos += 2
			un, _ := d.unqualifiedName()
			std := d.newNode(kAbbrev, -1, -1)
			d.nodes[std].num = 't'
			a = d.newNode(kQualified, std, un)
		} else {
			a = d.substitution(false)
			subst = true
		}
		if d.peek() == 'I' {
			if !subst {
				d.addSub(a)
			}
			a = d.template(a)
		}
		return a
	}
	a, _ := d.unqualifiedName()
	if d.peek() == 'I' {
		d.addSub(a)
		a = d.template(a)
	}
	return a
}

func (d *Demangler) nestedName() int32 {
	d.expect('N')
	if d.peek() == 'H' {
		d.fail() // C++23 explicit object parameter
	}
	q, hasQ := d.cvQualifiers()
	r := d.refQualifier()
	a := d.prefix()
	if hasQ || r != 0 {
		if k := d.nodes[a].kind; k == kMWQ || k == kTWQ {
			d.fail() // the reference would merge these in simplify
		}
		a = d.newNode(kMWQ, a, -1)
		d.nodes[a].q = q
		d.nodes[a].ref = r
	}
	d.expect('E')
	return a
}

// getLast mirrors the reference's getLast in prefix.
func (d *Demangler) getLast(a int32) int32 {
	for i := 0; i < maxDepth; i++ {
		n := &d.nodes[a]
		switch n.kind {
		case kTemplate:
			a = n.a
		case kQualified:
			a = n.b
		case kTagged:
			a = n.a
		case kVerbose:
			if c := abbrevLast(byte(n.num)); c >= 0 {
				// getLast of a verbose Template ends at its
				// unqualified Name.
				return d.constNode(kConst, c)
			}
			return a
		case kAbbrev:
			if n.num == 't' {
				return a
			}
			// A Qualified{std, Name}: its last name.
			return d.abbrevLastName(byte(n.num))
		default:
			return a
		}
	}
	d.fail()
	return -1
}

// abbrevLastName is the Name inside a standard substitution's
// Qualified{std, Name}.
func (d *Demangler) abbrevLastName(c byte) int32 {
	var k int32
	switch c {
	case 'a':
		k = cAllocator
	case 'b':
		k = cBasicStringShort
	case 's':
		k = cString
	case 'i':
		k = cIstream
	case 'o':
		k = cOstream
	default:
		k = cIostream
	}
	return d.constNode(kConst, k)
}

func (d *Demangler) prefix() int32 {
	d.enter()
	defer func() { d.depth-- }()
	a, last, cast := int32(-1), int32(-1), int32(-1)
	for {
		if d.eof() {
			d.fail()
		}
		next := int32(-1)
		c := d.peek()
		if isDigit(c) || isLower(c) || c == 'U' || c == 'L' || c == 'F' || c == 'W' || (c == 'D' && d.peek1() == 'C') {
			un, isCast := d.unqualifiedName()
			next = un
			if isCast {
				if cast >= 0 {
					d.fail()
				}
				cast = un
			}
		} else {
			switch c {
			case 'C':
				d.pos++
				inheriting := false
				if d.peek() == 'I' {
					inheriting = true
					d.pos++
				}
				if d.eof() || last < 0 {
					d.fail()
				}
				switch d.peek() {
				case '1', '2', '3', '4', '5':
				default:
					d.fail()
				}
				d.pos++
				base := int32(-1)
				if inheriting {
					base = d.demangleType()
				}
				next = d.newNode(kCtor, d.getLast(last), base)
				if d.peek() == 'B' {
					next = d.taggedName(next)
				}
			case 'D':
				if c1 := d.peek1(); c1 == 'T' || c1 == 't' {
					d.fail() // decltype
				}
				if d.pos+1 >= len(d.in) || last < 0 {
					d.fail()
				}
				switch d.peek1() {
				case '0', '1', '2', '4', '5':
				default:
					d.fail()
				}
				d.pos += 2
				next = d.newNode(kDtor, d.getLast(last), -1)
				if d.peek() == 'B' {
					next = d.taggedName(next)
				}
			case 'S':
				next = d.substitution(true)
			case 'I':
				if a < 0 {
					d.fail()
				}
				next = d.template(a)
				cast = -1
				a = -1
			case 'T':
				next = d.templateParam()
			case 'E':
				if a < 0 {
					d.fail()
				}
				return a
			case 'M':
				if a < 0 {
					d.fail()
				}
				d.pos++
				continue
			case 'J':
				if a < 0 {
					d.fail()
				}
				mark := len(d.tmp)
				for d.peek() != 'E' {
					d.tmp = append(d.tmp, d.templateArg())
				}
				d.pos++
				next = d.newList(kTemplate, a, mark)
				cast = -1
				a = -1
			default:
				d.fail()
			}
		}
		last = next
		if a < 0 {
			a = next
		} else {
			a = d.newNode(kQualified, a, next)
		}
		if c != 'S' && d.peek() != 'E' {
			d.addSub(a)
		}
	}
}

// unqualifiedName parses <unqualified-name>; isCast reports a conversion
// operator.
func (d *Demangler) unqualifiedName() (a int32, isCast bool) {
	c := d.peek()
	if c == 'W' || c == 'F' || d.eof() {
		d.fail() // modules, friends
	}
	switch {
	case isDigit(c):
		a = d.sourceName()
	case isLower(c):
		a, isCast = d.operatorName()
	default:
		switch c {
		case 'L':
			d.pos++
			a = d.sourceName()
			d.discriminator()
		case 'U':
			switch d.peek1() {
			case 'l':
				a = d.closureTypeName()
			case 't':
				a = d.unnamedTypeName()
			default:
				d.fail()
			}
		default:
			d.fail()
		}
	}
	if d.peek() == 'B' {
		a = d.taggedName(a)
	}
	return a, isCast
}

func (d *Demangler) sourceName() int32 {
	val := d.number()
	if val <= 0 || len(d.in)-d.pos < val {
		d.fail()
	}
	id := d.in[d.pos : d.pos+val]
	start := d.pos
	d.pos += val
	const anon = "_GLOBAL_"
	if len(id) > len(anon)+2 && strings.HasPrefix(id, anon) {
		c1, c2 := id[len(anon)], id[len(anon)+1]
		if (c1 == '.' || c1 == '_' || c1 == '$') && c2 == 'N' {
			return d.constNode(kConst, cAnonNamespace)
		}
	}
	n := d.newNode(kName, -1, -1)
	d.nodes[n].ls, d.nodes[n].ln = int32(start), int32(d.pos)
	return n
}

func (d *Demangler) number() int {
	neg := false
	if d.peek() == 'n' {
		neg = true
		d.pos++
	}
	if !isDigit(d.peek()) {
		d.fail()
	}
	val := 0
	for isDigit(d.peek()) {
		if val >= 0x80000000/10-10 {
			d.fail()
		}
		val = val*10 + int(d.in[d.pos]-'0')
		d.pos++
	}
	if neg {
		val = -val
	}
	return val
}

func (d *Demangler) seqID(eofOK bool) int {
	if d.peek() == '_' {
		d.pos++
		return 0
	}
	id := 0
	for {
		if d.eof() {
			if eofOK {
				return id + 1
			}
			d.fail()
		}
		if id >= 0x80000000/36-36 {
			d.fail()
		}
		c := d.in[d.pos]
		switch {
		case c == '_':
			d.pos++
			return id + 1
		case isDigit(c):
			id = id*36 + int(c-'0')
		case isUpper(c):
			id = id*36 + int(c-'A') + 10
		default:
			d.fail()
		}
		d.pos++
	}
}

func (d *Demangler) operatorName() (int32, bool) {
	if len(d.in)-d.pos < 2 {
		d.fail()
	}
	c0, c1 := d.in[d.pos], d.in[d.pos+1]
	d.pos += 2
	if c0 == 'c' && c1 == 'v' {
		// A conversion operator. Only types without template
		// parameters are handled (inCast makes templateParam fail),
		// which makes the reference's setTemplate calls no-ops.
		d.tmpls = append(d.tmpls, -1)
		d.inCast++
		t := d.demangleType()
		d.inCast--
		d.tmpls = d.tmpls[:len(d.tmpls)-1]
		return d.newNode(kCast, t, -1), true
	}
	if c0 == 'l' && c1 == 'i' {
		d.fail() // literal operator
	}
	for i := range operators {
		if operators[i].code[0] == c0 && operators[i].code[1] == c1 {
			return d.constNode(kOperator, int32(i)), false
		}
	}
	d.fail()
	return -1, false
}

func (d *Demangler) localName() int32 {
	d.expect('Z')
	fn := d.encoding(true)
	d.expect('E')
	if d.peek() == 's' {
		d.pos++
		n := d.constNode(kConst, cStringLiteral)
		d.discriminator()
		q := d.newNode(kQualified, fn, n)
		d.nodes[q].flags |= fLocal
		return q
	}
	num := -1
	if d.peek() == 'd' {
		d.pos++
		num = d.compactNumber()
	}
	n := d.name()
	d.discriminator()
	if num >= 0 {
		n = d.newNode(kDefaultArg, n, -1)
		d.nodes[n].num = int32(num)
	}
	q := d.newNode(kQualified, fn, n)
	d.nodes[q].flags |= fLocal
	return q
}

func (d *Demangler) special(prefix int, val int32) int32 {
	id := d.newNode(kSpecial, val, -1)
	d.nodes[id].num = int32(prefix)
	return id
}

func (d *Demangler) specialName() int32 {
	if d.peek() == 'T' {
		d.pos++
		if d.eof() {
			d.fail()
		}
		c := d.in[d.pos]
		d.pos++
		switch c {
		case 'V':
			return d.special(spVtable, d.demangleType())
		case 'T':
			return d.special(spVTT, d.demangleType())
		case 'I':
			return d.special(spTypeinfo, d.demangleType())
		case 'S':
			return d.special(spTypeinfoName, d.demangleType())
		case 'h':
			d.callOffset('h')
			return d.special(spNonVirtualThunk, d.encoding(false))
		case 'v':
			d.callOffset('v')
			return d.special(spVirtualThunk, d.encoding(false))
		case 'c':
			d.callOffset(0)
			d.callOffset(0)
			return d.special(spCovariantThunk, d.encoding(false))
		case 'C':
			derived := d.demangleType()
			if d.number() < 0 {
				d.fail()
			}
			d.expect('_')
			base := d.demangleType()
			id := d.newNode(kSpecial2, base, derived)
			d.nodes[id].num = spConstructionVtable
			return id
		case 'F':
			return d.special(spTypeinfoFn, d.demangleType())
		case 'J':
			return d.special(spJavaClass, d.demangleType())
		case 'H':
			return d.special(spTLSInit, d.name())
		case 'W':
			return d.special(spTLSWrapper, d.name())
		}
		d.fail()
	}
	d.expect('G')
	if d.eof() {
		d.fail()
	}
	c := d.in[d.pos]
	d.pos++
	switch c {
	case 'V':
		return d.special(spGuard, d.name())
	case 'R':
		n := d.name()
		d.seqID(true)
		return d.special(spRefTemp, n)
	case 'A':
		return d.special(spHiddenAlias, d.encoding(false))
	case 'T':
		if d.eof() {
			d.fail()
		}
		c := d.in[d.pos]
		d.pos++
		v := d.encoding(false)
		if c == 'n' {
			return d.special(spNonTransactionClone, v)
		}
		return d.special(spTransactionClone, v)
	}
	d.fail()
	return -1
}

func (d *Demangler) callOffset(c byte) {
	if c == 0 {
		if d.eof() {
			d.fail()
		}
		c = d.in[d.pos]
		d.pos++
	}
	switch c {
	case 'h':
		d.number()
	case 'v':
		d.number()
		d.expect('_')
		d.number()
	default:
		d.fail()
	}
	d.expect('_')
}

func (d *Demangler) demangleType() int32 {
	d.enter()
	defer func() { d.depth-- }()
	if d.eof() {
		d.fail()
	}
	addSubst := true
	q, hasQ := d.cvQualifiers()
	if hasQ {
		if d.eof() {
			d.fail()
		}
		if d.peek() == 'F' {
			addSubst = false
		}
	}
	c := d.peek()
	if b := builtinCode[c]; b != 0 {
		d.pos++
		ret := d.constNode(kBuiltin, int32(b-1))
		if hasQ {
			ret = d.newNode(kTWQ, ret, -1)
			d.nodes[ret].q = q
			d.addSub(ret)
		}
		return ret
	}
	var ret int32
	switch c {
	case 'F':
		ret = d.functionType()
	case 'N', 'Z', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		ret = d.name()
	case 'A':
		ret = d.arrayType()
	case 'M':
		d.pos++
		cl := d.demangleType()
		mem := d.demangleType()
		ret = d.newNode(kPtrMem, cl, mem)
	case 'T':
		if c1 := d.peek1(); c1 == 's' || c1 == 'u' || c1 == 'e' {
			d.fail() // elaborated type specifiers
		}
		ret = d.templateParam()
		if d.peek() == 'I' {
			d.addSub(ret)
			ret = d.template(ret)
		}
	case 'S':
		c2 := d.peek1()
		if isDigit(c2) || c2 == '_' || isUpper(c2) {
			ret = d.substitution(false)
			if d.peek() != 'I' {
				addSubst = false
			} else {
				ret = d.template(ret)
			}
		} else {
			ret = d.name()
			if d.nodes[ret].kind == kAbbrev || d.nodes[ret].kind == kVerbose {
				addSubst = false
			}
		}
	case 'O', 'P', 'R':
		d.pos++
		t := d.demangleType()
		k := kPointer
		if c != 'P' {
			if tk := d.nodes[t].kind; tk == kRef || tk == kRRef {
				d.fail() // the reference collapses these in simplify
			}
			k = kRef
			if c == 'O' {
				k = kRRef
			}
		}
		ret = d.newNode(k, t, -1)
	case 'U':
		switch d.peek1() {
		case 'l':
			ret = d.closureTypeName()
			addSubst = false
		case 't':
			ret = d.unnamedTypeName()
			addSubst = false
		default:
			d.fail()
		}
	case 'D':
		d.pos++
		if d.eof() {
			d.fail()
		}
		addSubst = false
		c2 := d.in[d.pos]
		d.pos++
		b := -1
		switch c2 {
		case 'p':
			t := d.demangleType()
			pack := d.findArgumentPack(t)
			ret = d.newNode(kPackExp, t, pack)
			d.nodes[ret].flags |= fPE
			addSubst = true
		case 'a':
			ret = d.constNode(kConst, cAuto)
		case 'c':
			ret = d.constNode(kConst, cDecltypeAuto)
		case 'f':
			b = cDecimal32
		case 'd':
			b = cDecimal64
		case 'e':
			b = cDecimal128
		case 'h':
			b = cHalf
		case 'u':
			b = cChar8
		case 's':
			b = cChar16
		case 'i':
			b = cChar32
		case 'n':
			b = cNullptr
		default:
			d.fail()
		}
		if b >= 0 {
			ret = d.constNode(kBuiltin, int32(b))
		}
	default:
		d.fail()
	}
	if addSubst {
		d.addSub(ret)
	}
	if hasQ {
		switch d.nodes[ret].kind {
		case kFunction:
			ret = d.newNode(kMWQ, ret, -1)
			d.nodes[ret].q = q
		case kMWQ:
			// The reference merges into the existing node, even
			// when it is shared through a substitution.
			d.nodes[ret].q = d.mergeQualifiers(q, d.nodes[ret].q)
		default:
			if d.nodes[ret].kind == kTWQ {
				q = d.mergeQualifiers(q, d.nodes[ret].q)
				ret = d.nodes[ret].a
			}
			ret = d.newNode(kTWQ, ret, -1)
			d.nodes[ret].q = q
		}
		d.addSub(ret)
	}
	return ret
}

// mergeQualifiers mirrors the reference: q1's qualifiers in order, then
// those of q2 whose name is not yet present.
func (d *Demangler) mergeQualifiers(q1, q2 uint32) uint32 {
	if q1 == 0 {
		return q2
	}
	if q2 == 0 {
		return q1
	}
	var present uint32
	r, shift := uint32(0), uint(0)
	for q := q1; q != 0; q >>= 3 {
		c := q & 7
		present |= 1 << c
		r |= c << shift
		shift += 3
	}
	for q := q2; q != 0; q >>= 3 {
		c := q & 7
		if present&(1<<c) == 0 {
			present |= 1 << c
			if shift >= 3*maxQuals {
				d.fail()
			}
			r |= c << shift
			shift += 3
		}
	}
	return r
}

// cvQualifiers parses [r] [V] [K] and the D qualifiers the reference
// accepts there (Dx, Do; DO and Dw with expressions are not handled).
func (d *Demangler) cvQualifiers() (uint32, bool) {
	var q uint32
	n := 0
	for !d.eof() {
		var c uint32
		switch d.in[d.pos] {
		case 'r':
			c = qRestrict
		case 'V':
			c = qVolatile
		case 'K':
			c = qConst
		case 'D':
			switch d.peek1() {
			case 'x':
				c = qTransactionSafe
				d.pos++
			case 'o':
				c = qNoexcept
				d.pos++
			case 'O', 'w':
				d.fail()
			}
		}
		if c == 0 {
			break
		}
		d.pos++
		if n == maxQuals {
			d.fail()
		}
		n++
		q = q<<3 | c
	}
	return q, n > 0
}

func (d *Demangler) parmlist() (mark int) {
	mark = len(d.tmp)
	for !d.eof() {
		c := d.in[d.pos]
		if c == 'E' || c == '.' || c == 'Q' {
			break
		}
		if (c == 'R' || c == 'O') && d.peek1() == 'E' {
			break
		}
		t := d.demangleType()
		d.tmp = append(d.tmp, t)
	}
	switch len(d.tmp) - mark {
	case 0:
		d.fail()
	case 1:
		if n := &d.nodes[d.tmp[mark]]; n.kind == kBuiltin && n.num == cVoid {
			d.tmp = d.tmp[:mark]
		}
	}
	return mark
}

func (d *Demangler) functionType() int32 {
	d.expect('F')
	if d.peek() == 'Y' {
		d.pos++
	}
	ret := d.bareFunctionType(true)
	if r := d.refQualifier(); r != 0 {
		ret = d.newNode(kMWQ, ret, -1)
		d.nodes[ret].ref = r
	}
	d.expect('E')
	return ret
}

// refQualifier parses an optional R (&) or O (&&): 0, 1 or 2.
func (d *Demangler) refQualifier() uint8 {
	switch d.peek() {
	case 'R':
		d.pos++
		return 1
	case 'O':
		d.pos++
		return 2
	}
	return 0
}

func (d *Demangler) bareFunctionType(hasReturnType bool) int32 {
	if d.peek() == 'J' {
		hasReturnType = true
		d.pos++
	}
	ret := int32(-1)
	if hasReturnType {
		ret = d.demangleType()
	}
	mark := d.parmlist()
	return d.newList(kFunction, ret, mark)
}

func (d *Demangler) arrayType() int32 {
	d.expect('A')
	if d.eof() {
		d.fail()
	}
	var dim int32
	if d.peek() == '_' {
		dim = d.constNode(kConst, cEmpty)
	} else if isDigit(d.peek()) {
		start := d.pos
		for isDigit(d.peek()) {
			d.pos++
		}
		dim = d.newNode(kName, -1, -1)
		d.nodes[dim].ls, d.nodes[dim].ln = int32(start), int32(d.pos)
	} else {
		d.fail() // dimension expression
	}
	d.expect('_')
	t := d.demangleType()
	if d.nodes[t].kind == kTWQ {
		arr := d.newNode(kArray, dim, d.nodes[t].a)
		r := d.newNode(kTWQ, arr, -1)
		d.nodes[r].q = d.nodes[t].q
		return r
	}
	return d.newNode(kArray, dim, t)
}

func (d *Demangler) compactNumber() int {
	if d.eof() {
		d.fail()
	}
	if d.peek() == '_' {
		d.pos++
		return 0
	}
	if d.peek() == 'n' {
		d.fail()
	}
	n := d.number()
	d.expect('_')
	return n + 1
}

func (d *Demangler) templateParam() int32 {
	d.expect('T')
	if d.peek() == 'L' || d.inCast > 0 {
		d.fail() // TL levels; template parameters in conversion types
	}
	n := d.compactNumber()
	if len(d.tmpls) == 0 {
		if d.lambdaLevel == 1 {
			return d.lambdaAuto(n)
		}
		d.fail()
	}
	t := d.tmpls[0]
	if t < 0 {
		d.fail()
	}
	if n >= int(d.nodes[t].ln) {
		if d.lambdaLevel == 1 {
			return d.lambdaAuto(n)
		}
		d.fail()
	}
	return d.templateParamNode(n, t)
}

func (d *Demangler) lambdaAuto(n int) int32 {
	id := d.newNode(kLambdaAuto, -1, -1)
	d.nodes[id].num = int32(n)
	d.nodes[id].flags |= fLA
	return id
}

func (d *Demangler) templateParamNode(n int, t int32) int32 {
	id := d.newNode(kTemplateParam, -1, t)
	d.nodes[id].num = int32(n)
	d.nodes[id].flags |= fTP
	return id
}

func (d *Demangler) template(name int32) int32 {
	mark := d.templateArgs()
	return d.newList(kTemplate, name, mark)
}

func (d *Demangler) templateArgs() (mark int) {
	if c := d.peek(); c != 'I' && c != 'J' {
		d.fail()
	}
	d.pos++
	mark = len(d.tmp)
	for d.peek() != 'E' {
		d.tmp = append(d.tmp, d.templateArg())
		if d.peek() == 'Q' {
			d.fail() // constraints
		}
	}
	d.pos++
	return mark
}

func (d *Demangler) templateArg() int32 {
	d.enter()
	defer func() { d.depth-- }()
	switch d.peek() {
	case 0:
		d.fail()
	case 'X':
		d.pos++
		e := d.expression()
		d.expect('E')
		return e
	case 'L':
		return d.exprPrimary()
	case 'I', 'J':
		mark := d.templateArgs()
		id := d.newList(kArgPack, -1, mark)
		d.nodes[id].flags |= fAP
		return id
	case 'T':
		switch d.peek1() {
		case 'y', 'n', 't', 'p', 'k':
			d.fail() // template parameter declarations
		}
	}
	return d.demangleType()
}

func (d *Demangler) exprPrimary() int32 {
	d.expect('L')
	if d.eof() {
		d.fail()
	}
	var ret int32
	if c := d.peek(); c == '_' || c == 'Z' {
		if c == '_' {
			d.pos++
		}
		d.expect('Z')
		ret = d.encoding(false)
	} else {
		t := d.demangleType()
		neg := false
		if d.peek() == 'n' {
			neg = true
			d.pos++
		}
		if d.peek() == 'E' {
			if n := &d.nodes[t]; n.kind != kBuiltin || n.num != cNullptr {
				d.fail() // lambda and string literals; missing value
			}
		}
		start := d.pos
		for d.pos < len(d.in) && d.in[d.pos] != 'E' {
			d.pos++
		}
		ret = d.newNode(kLiteral, t, -1)
		d.nodes[ret].ls, d.nodes[ret].ln = int32(start), int32(d.pos)
		if neg {
			d.nodes[ret].flags |= fNeg
		}
	}
	d.expect('E')
	return ret
}

// discriminator skips a <discriminator>; the reference does not print it.
func (d *Demangler) discriminator() {
	if d.peek() != '_' {
		for i := d.pos; i < len(d.in); i++ {
			if !isDigit(d.in[i]) {
				return
			}
		}
		d.pos = len(d.in)
		return
	}
	d.pos++
	trailing := false
	if d.peek() == '_' {
		d.pos++
		trailing = true
	}
	n := d.number()
	if n < 0 {
		d.fail()
	}
	if trailing && n >= 10 {
		d.expect('_')
	}
}

func (d *Demangler) closureTypeName() int32 {
	d.pos += 2 // Ul
	oldLL := d.lambdaLevel
	d.lambdaLevel = len(d.tmpls) + 1
	if d.peek() == 'T' {
		switch d.peek1() {
		case 'y', 'k', 'n', 't', 'p':
			d.fail() // explicit lambda template parameters
		}
	}
	if d.peek() == 'Q' {
		d.fail()
	}
	mark := d.parmlist()
	d.lambdaLevel = oldLL
	if d.peek() == 'Q' {
		d.fail()
	}
	d.expect('E')
	num := d.compactNumber()
	id := d.newList(kClosure, -1, mark)
	// LambdaAuto inside a closure is left alone by substitution copies.
	d.nodes[id].flags &^= fLA
	d.nodes[id].num = int32(num)
	return id
}

func (d *Demangler) unnamedTypeName() int32 {
	d.pos += 2 // Ut
	num := d.compactNumber()
	id := d.newNode(kUnnamed, -1, -1)
	d.nodes[id].num = int32(num)
	d.addSub(id)
	return id
}

func (d *Demangler) substitution(forPrefix bool) int32 {
	d.expect('S')
	if d.eof() {
		d.fail()
	}
	c := d.in[d.pos]
	if c == '_' || isDigit(c) || isUpper(c) {
		id := d.seqID(false)
		if id >= len(d.subs) {
			d.fail()
		}
		return d.substCopy(d.subs[id])
	}
	d.pos++
	switch c {
	case 't', 'a', 'b', 's', 'i', 'o', 'd':
	default:
		d.fail()
	}
	k := kAbbrev
	if forPrefix && (d.peek() == 'C' || d.peek() == 'D') {
		switch c {
		case 's', 'i', 'o', 'd':
			k = kVerbose
		}
	}
	a := d.newNode(k, -1, -1)
	d.nodes[a].num = int32(c)
	if d.peek() == 'B' {
		a = d.taggedName(a)
		d.addSub(a)
	}
	return a
}

// expression parses the subset of <expression> handled here: literals,
// template parameters, names with template arguments, unresolved names
// (sr), pack expansions (sp), function parameters (fp) and the address-of
// operator (ad). Everything else fails.
func (d *Demangler) expression() int32 {
	d.enter()
	defer func() { d.depth-- }()
	if d.eof() {
		d.fail()
	}
	c, c1 := d.peek(), d.peek1()
	switch {
	case c == 'L':
		return d.exprPrimary()
	case c == 'T':
		return d.templateParam()
	case c == 's' && c1 == 'r':
		return d.unresolvedName()
	case c == 's' && c1 == 'p':
		d.pos += 2
		e := d.expression()
		pack := d.findArgumentPack(e)
		id := d.newNode(kPackExp, e, pack)
		d.nodes[id].flags |= fPE
		return id
	case c == 'f' && c1 == 'p':
		d.pos += 2
		if d.peek() == 'T' {
			d.pos++
			return d.constNode(kFunctionParam, 0)
		}
		d.cvQualifiers()
		return d.constNode(kFunctionParam, int32(d.compactNumber()+1))
	case isDigit(c) || (c == 'o' && c1 == 'n'):
		if c == 'o' {
			d.pos += 2
		}
		n, isCast := d.unqualifiedName()
		if isCast {
			d.fail()
		}
		if d.peek() == 'I' {
			n = d.template(n)
		}
		return n
	case c == 'a' && c1 == 'd':
		d.pos += 2
		return d.newNode(kUnaryAddr, d.expression(), -1)
	}
	d.fail()
	return -1
}

// unresolvedName parses <unresolved-name> without the gs prefix.
func (d *Demangler) unresolvedName() int32 {
	if d.peek() == 'g' {
		d.fail()
	}
	d.pos += 2 // sr
	if d.eof() {
		d.fail()
	}
	switch d.peek() {
	case 'T', 'D', 'S':
		t := d.demangleType()
		n := d.newNode(kQualified, t, d.baseUnresolvedName())
		if d.peek() == 'I' {
			n = d.template(n)
			d.addSub(n)
		}
		return n
	}
	s := int32(-1)
	if d.peek() == 'N' {
		d.pos++
		s = d.demangleType()
	}
	for d.peek() != 'E' {
		// GCC can emit type/name without an 'E'.
		if s >= 0 && !d.eof() && !isDigit(d.peek()) {
			if q := &d.nodes[s]; q.kind == kQualified {
				if t := q.a; d.nodes[t].kind == kTemplate {
					d.addSub(d.nodes[t].a)
					d.addSub(t)
				} else {
					d.addSub(t)
				}
				return s
			}
		}
		n := d.sourceName()
		if d.peek() == 'I' {
			d.addSub(n)
			n = d.template(n)
		}
		if s < 0 {
			s = n
		} else {
			s = d.newNode(kQualified, s, n)
		}
	}
	if s < 0 {
		d.fail()
	}
	d.pos++
	return d.newNode(kQualified, s, d.baseUnresolvedName())
}

// baseUnresolvedName parses <base-unresolved-name> without dn.
func (d *Demangler) baseUnresolvedName() int32 {
	var n int32
	switch {
	case d.peek() == 'd' && d.peek1() == 'n':
		d.fail()
	case d.peek() == 'o' && d.peek1() == 'n':
		d.pos += 2
		fallthrough
	case !isDigit(d.peek()):
		var isCast bool
		if n, isCast = d.operatorName(); isCast {
			d.fail()
		}
	default:
		n = d.sourceName()
	}
	if d.peek() == 'I' {
		n = d.template(n)
	}
	return n
}
