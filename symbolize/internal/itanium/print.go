package itanium

import "strconv"

// The printer mirrors the reference's print methods (ast.go), including
// its "inner" stack that prints C declarators inside out, its record of
// the last byte written (some writes bypass it in the reference and do
// so here too), and its guard against printing a node nested in itself.
// The inner stack is d.inner; the reference's current inner list is the
// frame d.inner[d.ib:].

func (d *Demangler) writeString(s string) {
	if len(s) > 0 {
		d.last = s[len(s)-1]
	}
	d.out = append(d.out, s...)
}

func (d *Demangler) writeByte(c byte) {
	d.last = c
	d.out = append(d.out, c)
}

// writeRaw writes without updating last, like the reference's
// fmt.Fprintf(&ps.buf, ...).
func (d *Demangler) writeRaw(s string) { d.out = append(d.out, s...) }

func (d *Demangler) writeInput(n *node) {
	s := d.in[n.ls:n.ln]
	d.writeString(s)
}

func (d *Demangler) frameLen() int { return len(d.inner) - d.ib }

func (d *Demangler) push(id int32) { d.inner = append(d.inner, id) }

func (d *Demangler) pop() { d.inner = d.inner[:len(d.inner)-1] }

func (d *Demangler) print(id int32) {
	if len(d.out)-d.start > maxOutput {
		d.fail()
	}
	n := &d.nodes[id]
	if n.stack >= 2 {
		// The reference silently prints nothing here.
		d.fail()
	}
	n.stack++
	d.depth++
	if d.depth > maxDepth {
		d.fail()
	}
	d.printNode(id)
	d.depth--
	d.nodes[id].stack--
}

func (d *Demangler) printNode(id int32) {
	n := &d.nodes[id]
	switch n.kind {
	case kName:
		d.writeInput(n)
	case kConst, kBuiltin:
		d.writeString(constStrs[n.num])
	case kAbbrev:
		d.writeString(abbrevShort(byte(n.num)))
	case kVerbose:
		d.writeString(abbrevVerbose(byte(n.num)))
	case kTyped:
		name, typ := n.a, n.b
		holdIb, holdLen := d.ib, len(d.inner)
		d.ib = len(d.inner)
		d.push(id)
		d.print(typ)
		if d.frameLen() > 0 {
			d.writeByte(' ')
			d.print(name)
		}
		d.inner = d.inner[:holdLen]
		d.ib = holdIb
	case kQualified:
		scope, name := n.a, n.b
		d.print(scope)
		d.writeString("::")
		d.print(name)
	case kTemplate:
		name := n.a
		holdIb, holdLen := d.ib, len(d.inner)
		d.ib = len(d.inner)
		d.print(name)
		if d.last == '<' {
			d.writeByte(' ')
		}
		d.writeByte('<')
		d.printList(id, true)
		if d.last == '>' {
			d.writeByte(' ')
		}
		d.writeByte('>')
		d.inner = d.inner[:holdLen]
		d.ib = holdIb
	case kTemplateParam:
		t := n.b
		if t < 0 || n.num >= d.nodes[t].ln {
			d.fail()
		}
		d.print(d.lists[d.nodes[t].ls+n.num])
	case kLambdaAuto:
		d.writeRaw("auto:")
		d.out = strconv.AppendInt(d.out, int64(n.num)+1, 10)
	case kTWQ:
		q, base := n.q, n.a
		d.push(id)
		d.print(base)
		if d.frameLen() > 0 {
			d.writeByte(' ')
			d.writeQuals(q)
			if d.frameLen() > 0 {
				d.pop()
			}
		}
	case kMWQ:
		d.push(id)
		d.print(n.a)
		if d.frameLen() > 0 {
			d.printMWQInner(id)
			d.pop()
		}
	case kPointer, kRef, kRRef:
		d.push(id)
		d.print(n.a)
		if d.frameLen() > 0 {
			d.printInner(id)
			d.pop()
		}
	case kArray:
		d.push(id)
		d.print(n.b)
		if d.frameLen() > 0 {
			d.pop()
			d.printDimension(id)
		}
	case kFunction:
		ret := n.a
		if n.flags&fForLocal != 0 {
			ret = -1
		}
		if ret >= 0 {
			d.push(id)
			d.print(ret)
			if d.frameLen() == 0 {
				return
			}
			d.pop()
			d.writeByte(' ')
		}
		d.printArgs(id)
	case kPtrMem:
		d.push(id)
		d.print(n.b)
		if d.frameLen() > 0 {
			d.printOneInner(false)
		}
	case kOperator:
		name := operators[n.num].name
		d.writeString("operator")
		if isLower(name[0]) {
			d.writeByte(' ')
		}
		if name[len(name)-1] == ' ' {
			name = name[:len(name)-1]
		}
		d.writeString(name)
	case kCast:
		d.writeString("operator ")
		d.print(n.a)
	case kCtor:
		d.print(n.a)
	case kDtor:
		d.writeByte('~')
		d.print(n.a)
	case kTagged:
		tag := n.b
		d.print(n.a)
		d.writeString("[abi:")
		d.print(tag)
		d.writeByte(']')
	case kPackExp:
		if n.b >= 0 {
			d.print(n.a)
			return
		}
		d.parenthesize(n.a)
		d.writeString("...")
	case kArgPack:
		for i := int32(0); i < d.nodes[id].ln; i++ {
			if i > 0 {
				d.writeString(", ")
			}
			d.print(d.lists[d.nodes[id].ls+i])
		}
	case kExprList:
		d.printList(id, false)
	case kLiteral:
		d.printLiteral(id)
	case kDefaultArg:
		d.writeRaw("{default arg#")
		d.out = strconv.AppendInt(d.out, int64(n.num)+1, 10)
		d.writeRaw("}::")
		d.print(n.a)
	case kClosure:
		d.writeString("{lambda")
		d.writeByte('(')
		d.printList(id, false)
		d.writeByte(')')
		d.writeString("#")
		d.out = strconv.AppendInt(d.out, int64(d.nodes[id].num)+1, 10)
		d.writeString("}")
	case kUnnamed:
		d.writeString("{unnamed type#")
		d.out = strconv.AppendInt(d.out, int64(n.num)+1, 10)
		d.writeString("}")
	case kClone:
		s, e := n.ls, n.ln
		d.print(n.a)
		d.writeString(" [clone ")
		d.writeString(d.in[s:e])
		d.writeString("]")
	case kSpecial:
		d.writeString(specialPrefixes[n.num])
		d.print(n.a)
	case kUnaryAddr:
		// The reference does not print the parameters of a function
		// whose address is taken.
		e := n.a
		if en := &d.nodes[e]; en.kind == kTyped && d.nodes[en.b].kind == kFunction {
			e = en.a
		}
		d.writeString("&")
		d.parenthesize(e)
	case kFunctionParam:
		if n.num == 0 {
			d.writeString("this")
		} else {
			d.writeRaw("{parm#")
			d.out = strconv.AppendInt(d.out, int64(n.num), 10)
			d.writeRaw("}")
		}
	case kSpecial2:
		v2 := n.b
		d.writeString(specialPrefixes[n.num])
		d.print(n.a)
		d.writeString("-in-")
		d.print(v2)
	default:
		d.fail()
	}
}

func (d *Demangler) writeQuals(q uint32) {
	for first := true; q != 0; q >>= 3 {
		if !first {
			d.writeByte(' ')
		}
		d.writeString(qualNames[q&7])
		first = false
	}
}

func (d *Demangler) printMWQInner(id int32) {
	n := &d.nodes[id]
	q, ref := n.q, n.ref
	if q != 0 {
		d.writeByte(' ')
		d.writeQuals(q)
	}
	switch ref {
	case 1:
		d.writeByte(' ')
		d.writeString("&")
	case 2:
		d.writeByte(' ')
		d.writeString("&&")
	}
}

// printInner prints node id as an inner type (the reference's printInner
// methods).
func (d *Demangler) printInner(id int32) {
	n := &d.nodes[id]
	switch n.kind {
	case kTyped:
		d.print(n.a)
	case kTWQ:
		q := n.q
		d.writeByte(' ')
		d.writeQuals(q)
	case kMWQ:
		d.printMWQInner(id)
	case kPointer:
		d.writeString("*")
	case kRef:
		d.writeString("&")
	case kRRef:
		d.writeString("&&")
	case kArray:
		d.printDimension(id)
	case kFunction:
		d.printArgs(id)
	case kPtrMem:
		class := n.a
		if d.last != '(' {
			d.writeByte(' ')
		}
		d.print(class)
		d.writeString("::*")
	default:
		d.print(id)
	}
}

// printOneInner pops and prints the top of the inner frame; with save,
// method qualifiers are moved to d.save instead.
func (d *Demangler) printOneInner(save bool) {
	if d.frameLen() == 0 {
		d.fail()
	}
	a := d.inner[len(d.inner)-1]
	d.pop()
	if save && d.nodes[a].kind == kMWQ {
		d.save = append(d.save, a)
		return
	}
	d.printInner(a)
}

func (d *Demangler) printInnerAll(save bool) {
	for d.frameLen() > 0 {
		d.printOneInner(save)
	}
}

func (d *Demangler) isEmpty(id int32) bool {
	n := &d.nodes[id]
	switch n.kind {
	case kArgPack:
		for i := int32(0); i < n.ln; i++ {
			if !d.isEmpty(d.lists[n.ls+i]) {
				return false
			}
		}
		return true
	case kExprList:
		return n.ln == 0
	case kPackExp:
		return n.b >= 0 && d.isEmpty(n.a)
	}
	return false
}

// printList prints the list of id separated by ", ", skipping empty
// elements if skipEmpty.
func (d *Demangler) printList(id int32, skipEmpty bool) {
	first := true
	for i := int32(0); i < d.nodes[id].ln; i++ {
		x := d.lists[d.nodes[id].ls+i]
		if skipEmpty && d.isEmpty(x) {
			continue
		}
		if !first {
			d.writeString(", ")
		}
		d.print(x)
		first = false
	}
}

func (d *Demangler) printArgs(id int32) {
	paren, space := false, false
	for i := len(d.inner) - 1; i >= d.ib; i-- {
		switch d.nodes[d.inner[i]].kind {
		case kPointer, kRef, kRRef:
			paren = true
		case kTWQ, kPtrMem:
			space = true
			paren = true
		}
		if paren {
			break
		}
	}
	if paren {
		if !space && d.last != '(' && d.last != '*' {
			space = true
		}
		if space && d.last != ' ' {
			d.writeByte(' ')
		}
		d.writeByte('(')
	}
	saveMark := len(d.save)
	d.printInnerAll(true)
	if paren {
		d.writeByte(')')
	}
	d.writeByte('(')
	first := true
	for i := int32(0); i < d.nodes[id].ln; i++ {
		x := d.lists[d.nodes[id].ls+i]
		if d.isEmpty(x) {
			continue
		}
		if !first {
			d.writeString(", ")
		}
		d.print(x)
		first = false
	}
	d.writeByte(')')
	d.inner = append(d.inner[:d.ib], d.save[saveMark:]...)
	d.save = d.save[:saveMark]
	d.printInnerAll(false)
}

func (d *Demangler) printDimension(id int32) {
	space := true
	for d.frameLen() > 0 {
		top := d.inner[len(d.inner)-1]
		in := top
		if d.nodes[in].kind == kTWQ {
			in = d.nodes[in].a
		}
		if d.nodes[in].kind == kArray {
			if in == top {
				space = false
			}
			d.printOneInner(false)
		} else {
			d.writeByte(' ')
			d.writeByte('(')
			d.printInnerAll(false)
			d.writeByte(')')
		}
	}
	if space {
		d.writeString(" ")
	}
	d.writeByte('[')
	d.print(d.nodes[id].a)
	d.writeByte(']')
}

func (d *Demangler) printLiteral(id int32) {
	n := &d.nodes[id]
	val := d.in[n.ls:n.ln]
	neg := n.flags&fNeg != 0
	typ := n.a
	isFloat := false
	if t := &d.nodes[typ]; t.kind == kBuiltin {
		suffix, hasSuffix := "", true
		switch t.num {
		case cInt:
		case cUnsignedInt:
			suffix = "u"
		case cLong:
			suffix = "l"
		case cUnsignedLong:
			suffix = "ul"
		case cLongLong:
			suffix = "ll"
		case cUnsignedLongLong:
			suffix = "ull"
		default:
			hasSuffix = false
		}
		switch {
		case hasSuffix:
			if neg {
				d.writeByte('-')
			}
			d.writeString(val)
			d.writeString(suffix)
			return
		case t.num == cBool && !neg && (val == "0" || val == "1"):
			if val == "0" {
				d.writeString("false")
			} else {
				d.writeString("true")
			}
			return
		case t.num == cBool:
		case t.num == cNullptr && (val == "" || val == "0"):
			d.print(typ)
			return
		default:
			switch t.num {
			case cDouble, cLongDouble, cFloat, cFloat128, cHalf:
				isFloat = true
			}
		}
	}
	d.writeByte('(')
	d.print(typ)
	d.writeByte(')')
	if isFloat {
		d.writeByte('[')
	}
	if neg {
		d.writeByte('-')
	}
	d.writeString(val)
	if isFloat {
		d.writeByte(']')
	}
}

// parenthesize mirrors the reference's parenthesize.
func (d *Demangler) parenthesize(id int32) {
	paren := true
	switch n := &d.nodes[id]; n.kind {
	case kName, kConst, kAbbrev, kFunctionParam:
		paren = false
	case kQualified:
		paren = n.flags&fLocal != 0
	}
	if paren {
		d.writeByte('(')
	}
	d.print(id)
	if paren {
		d.writeByte(')')
	}
}
