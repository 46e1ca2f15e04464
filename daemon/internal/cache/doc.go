// Package cache is the bounded, race-free map garmd's per-caller caches are
// built on (field resolutions per shape, listed schemas per tool and shape).
// It exists so every such cache has the same bound and the same eviction,
// and so step packages share it without importing each other.
//
// It refuses to grow: a full cache forgets one entry at random (Go's map
// order) to make room. That costs nothing on the hit path, and an evicted
// entry costs one recomputation when it returns. Values must be safe to
// share: every caller of one key gets the same value.
package cache
