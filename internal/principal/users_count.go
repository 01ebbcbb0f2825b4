package principal

// WithToken counts the users that can sign in with a bearer token: with none, and no other sign-in, the
// gateway refuses every request, which the operator should hear about at start.
func (u *Users) WithToken() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, us := range u.users {
		if us.hasToken {
			n++
		}
	}
	return n
}
