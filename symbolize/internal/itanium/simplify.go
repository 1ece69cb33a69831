package itanium

// This file mirrors the reference's tree rewriting: the copy a
// substitution makes to rebind template parameters (substitution in
// demangle.go), the simplify pass that replaces template parameters by
// their arguments and expands packs (simplify, simplifyOne), and
// findArgumentPack. Subtrees whose flags show nothing to rewrite are
// returned as they are, which is what the reference's Copy does for them.

// children reports which fields of a node of kind k are child nodes.
func children(k kind) (a, b, l bool) {
	switch k {
	case kTyped, kQualified, kArray, kPtrMem, kCtor, kTagged, kSpecial2:
		return true, true, false
	case kTemplate, kFunction:
		return true, false, true
	case kTWQ, kMWQ, kPointer, kRef, kRRef, kCast, kDtor, kPackExp, kLiteral,
		kDefaultArg, kClone, kSpecial, kUnaryAddr:
		return true, false, false
	case kArgPack, kExprList, kClosure:
		return false, false, true
	}
	return false, false, false
}

// intrinsic returns the flags a node of kind k has by itself.
func intrinsic(k kind) uint8 {
	switch k {
	case kTemplateParam:
		return fTP
	case kLambdaAuto:
		return fLA
	case kPackExp:
		return fPE
	case kArgPack:
		return fAP
	}
	return 0
}

// rebuild appends a copy of node id with children a, b and (when
// newList) the list d.tmp[mark:], recomputing the inherited flags.
func (d *Demangler) rebuild(id, a, b int32, newList bool, mark int) int32 {
	if len(d.nodes) >= maxNodes {
		d.fail()
	}
	n := d.nodes[id]
	n.a, n.b = a, b
	n.seen, n.seen2, n.stack = 0, 0, 0
	f := intrinsic(n.kind) | d.mark
	ca, cb, cl := children(n.kind)
	if ca && a >= 0 {
		f |= d.nodes[a].flags & fInherit
	}
	if cb && b >= 0 {
		f |= d.nodes[b].flags & fInherit
	}
	if newList {
		var lf uint8
		n.ls, n.ln, lf = d.finishList(mark)
		f |= lf
	} else if cl {
		for _, x := range d.lists[n.ls : n.ls+n.ln] {
			f |= d.nodes[x].flags & fInherit
		}
	}
	if n.kind == kClosure {
		f &^= fLA
	}
	n.flags = n.flags&^fInherit | f
	d.nodes = append(d.nodes, n)
	return int32(len(d.nodes) - 1)
}

func (d *Demangler) nextEpoch() uint32 {
	d.epoch++
	if d.epoch == 0 {
		for i := range d.nodes {
			d.nodes[i].seen, d.nodes[i].seen2 = 0, 0
		}
		d.epoch = 1
	}
	return d.epoch
}

// substCopy returns the node a substitution stands for: ret itself, or a
// copy with template parameters rebound to the current template.
func (d *Demangler) substCopy(ret int32) int32 {
	if d.nodes[ret].flags&(fTP|fLA|fPE) == 0 {
		return ret
	}
	d.copyRet = ret
	d.copyEpoch = d.nextEpoch()
	return d.copyRec(ret, d.lambdaLevel > 0)
}

func (d *Demangler) copyRec(id int32, inLambda bool) int32 {
	d.enter()
	defer func() { d.depth-- }()
	n := &d.nodes[id]
	if n.flags&(fTP|fLA|fPE) == 0 {
		return id
	}
	switch n.kind {
	case kTemplateParam, kLambdaAuto:
		if inLambda {
			if n.kind == kLambdaAuto {
				return id
			}
			return d.lambdaAuto(int(n.num))
		}
		var t int32
		switch {
		case len(d.tmpls) > 0:
			t = d.tmpls[len(d.tmpls)-1]
		case d.nodes[d.copyRet].kind == kTemplate:
			t = d.copyRet
		default:
			d.fail()
		}
		if t < 0 || n.num >= d.nodes[t].ln {
			d.fail()
		}
		return d.templateParamNode(int(n.num), t)
	case kTyped:
		d.fail() // template parameters under a nested encoding
	case kClosure:
		inLambda = true
	default:
		if n.seen == d.copyEpoch {
			return id
		}
		n.seen = d.copyEpoch
	}
	if n.kind == kPackExp {
		oldPack := n.b
		base := d.copyRec(n.a, inLambda)
		if base == d.nodes[id].a {
			return id
		}
		pe := d.rebuild(id, base, oldPack, false, 0)
		if pack := d.findArgumentPack(base); pack != oldPack {
			pe = d.rebuild(pe, base, pack, false, 0)
		}
		return pe
	}
	return d.copyChildren(id, func(x int32) int32 { return d.copyRec(x, inLambda) })
}

// copyChildren applies f to the children of id in the reference's Copy
// order (a, b, then the list) and returns id, or a rebuilt node when a
// child changed.
func (d *Demangler) copyChildren(id int32, f func(int32) int32) int32 {
	n := d.nodes[id]
	ca, cb, cl := children(n.kind)
	a, b := n.a, n.b
	if ca && a >= 0 {
		a = f(a)
	}
	if cb && b >= 0 {
		b = f(b)
	}
	changed := a != n.a || b != n.b
	listChanged := false
	mark := len(d.tmp)
	if cl {
		for i := int32(0); i < n.ln; i++ {
			x := d.lists[n.ls+i]
			y := f(x)
			d.tmp = append(d.tmp, y)
			if y != x {
				listChanged = true
			}
		}
	}
	if !changed && !listChanged {
		d.tmp = d.tmp[:mark]
		return id
	}
	if !listChanged {
		d.tmp = d.tmp[:mark]
	}
	return d.rebuild(id, a, b, listChanged, mark)
}

// simplify mirrors the reference's simplify.
func (d *Demangler) simplify(id int32) int32 {
	if d.nodes[id].flags&fVisit == 0 {
		return id
	}
	d.simpEpoch[0] = d.nextEpoch()
	d.mark = fSimp
	r := d.simpRec(id, 0)
	d.mark = 0
	return r
}

func (d *Demangler) simpRec(id int32, lvl int) int32 {
	d.enter()
	defer func() { d.depth-- }()
	n := &d.nodes[id]
	if lvl == 0 {
		if n.seen == d.simpEpoch[0] {
			return id
		}
		n.seen = d.simpEpoch[0]
	} else {
		if n.seen2 == d.simpEpoch[1] {
			return id
		}
		n.seen2 = d.simpEpoch[1]
	}
	if n.flags&fVisit == 0 {
		return id
	}
	if n.kind == kTemplateParam {
		if t := n.b; t >= 0 && n.num < d.nodes[t].ln {
			return d.lists[d.nodes[t].ls+n.num]
		}
		return id
	}
	x := d.copyChildren(id, func(c int32) int32 { return d.simpRec(c, lvl) })
	if r := d.simplifyOne(x, lvl); r >= 0 {
		return r
	}
	return x
}

func (d *Demangler) newQ(k kind, a int32, q uint32, ref uint8) int32 {
	id := d.newNode(k, a, -1)
	d.nodes[id].q = q
	d.nodes[id].ref = ref
	return id
}

// simplifyOne mirrors the reference's simplifyOne; -1 means no change.
func (d *Demangler) simplifyOne(x int32, lvl int) int32 {
	n := d.nodes[x]
	switch n.kind {
	case kMWQ:
		m := d.nodes[n.a]
		switch m.kind {
		case kMWQ:
			ref := n.ref
			if ref == 0 {
				ref = m.ref
			} else if m.ref != 0 && (ref == 1 || m.ref == 1) {
				ref = 1
			}
			return d.newQ(kMWQ, m.a, d.mergeQualifiers(n.q, m.q), ref)
		case kTWQ:
			return d.newQ(kMWQ, m.a, d.mergeQualifiers(n.q, m.q), n.ref)
		}
	case kTWQ:
		b := d.nodes[n.a]
		switch b.kind {
		case kFunction:
			return d.newQ(kMWQ, n.a, n.q, 0)
		case kTWQ:
			return d.newQ(kTWQ, b.a, d.mergeQualifiers(n.q, b.q), 0)
		case kMWQ:
			return d.newQ(kMWQ, b.a, d.mergeQualifiers(n.q, b.q), b.ref)
		}
	case kRef:
		switch b := d.nodes[n.a]; b.kind {
		case kRef:
			return n.a
		case kRRef:
			return d.newNode(kRef, b.a, -1)
		}
	case kRRef:
		switch d.nodes[n.a].kind {
		case kRef, kRRef:
			return n.a
		}
	case kArray:
		if e := d.nodes[n.b]; e.kind == kTWQ {
			arr := d.newNode(kArray, n.a, e.a)
			return d.newQ(kTWQ, arr, e.q, 0)
		}
	case kPackExp:
		if n.b < 0 {
			return -1
		}
		if lvl > 0 {
			d.fail() // nested pack expansion
		}
		pack := n.b
		mark := len(d.tmp)
		for i := int32(0); i < d.nodes[pack].ln; i++ {
			arg := d.lists[d.nodes[pack].ls+i]
			d.repEpoch = d.nextEpoch()
			b := d.copyRep(n.a, pack, arg)
			if d.nodes[b].flags&fVisit != 0 {
				d.simpEpoch[1] = d.nextEpoch()
				b = d.simpRec(b, 1)
			}
			d.tmp = append(d.tmp, b)
		}
		return d.newList(kExprList, -1, mark)
	}
	return -1
}

// copyRep replaces the argument pack node pack by arg inside id, not
// descending into pack expansions (the copy in the reference's
// simplifyOne for *PackExpansion).
func (d *Demangler) copyRep(id, pack, arg int32) int32 {
	d.enter()
	defer func() { d.depth-- }()
	n := &d.nodes[id]
	if n.kind == kPackExp || n.seen2 == d.repEpoch {
		return id
	}
	n.seen2 = d.repEpoch
	if n.flags&fAP == 0 {
		return id
	}
	x := d.copyChildren(id, func(c int32) int32 { return d.copyRep(c, pack, arg) })
	if x == id && id == pack {
		return arg
	}
	return x
}

// findArgumentPack mirrors the reference: the first template parameter
// (in traversal order) whose argument is an argument pack.
func (d *Demangler) findArgumentPack(a int32) int32 {
	budget := 1 << 16
	return d.findPack(a, &budget)
}

func (d *Demangler) findPack(a int32, budget *int) int32 {
	*budget--
	if *budget < 0 {
		d.fail()
	}
	d.enter()
	defer func() { d.depth-- }()
	n := &d.nodes[a]
	if n.flags&fTP == 0 {
		return -1
	}
	switch n.kind {
	case kTemplateParam:
		t := n.b
		if t < 0 || n.num >= d.nodes[t].ln {
			return -1
		}
		if arg := d.lists[d.nodes[t].ls+n.num]; d.nodes[arg].kind == kArgPack {
			return arg
		}
		return -1
	case kPackExp, kClosure, kTagged, kDefaultArg:
		return -1
	}
	ca, cb, cl := children(n.kind)
	if ca && n.a >= 0 {
		if r := d.findPack(n.a, budget); r >= 0 {
			return r
		}
	}
	n = &d.nodes[a]
	if cb && n.b >= 0 {
		if r := d.findPack(n.b, budget); r >= 0 {
			return r
		}
	}
	if cl {
		n = &d.nodes[a]
		for i := int32(0); i < n.ln; i++ {
			if r := d.findPack(d.lists[d.nodes[a].ls+i], budget); r >= 0 {
				return r
			}
		}
	}
	return -1
}
