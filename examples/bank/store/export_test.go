package store

// SetMade pretends the store has made n payments.
func (b *Bank) SetMade(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.made = n
}
