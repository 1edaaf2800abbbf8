package kit

// FindCondition is the index of the condition of type t in conds, or -1; typeOf reads a
// condition's type.
func FindCondition[C any, K comparable](conds []C, typeOf func(*C) K, t K) int {
	for i := range conds {
		if typeOf(&conds[i]) == t {
			return i
		}
	}
	return -1
}

// SetCondition replaces every condition of c's type with c, or appends c when there is none.
func SetCondition[C any, K comparable](conds []C, typeOf func(*C) K, c C) []C {
	t, found := typeOf(&c), false
	for i := range conds {
		if typeOf(&conds[i]) == t {
			conds[i], found = c, true
		}
	}
	if !found {
		conds = append(conds, c)
	}
	return conds
}

// RemoveCondition drops the conditions of type t; none left is nil.
func RemoveCondition[C any, K comparable](conds []C, typeOf func(*C) K, t K) []C {
	var out []C
	for i := range conds {
		if typeOf(&conds[i]) != t {
			out = append(out, conds[i])
		}
	}
	return out
}
