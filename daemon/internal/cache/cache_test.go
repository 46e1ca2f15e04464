package cache_test

import (
	"sync"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/cache"
)

func TestAMapNeverHoldsMoreThanItsSize(t *testing.T) {
	c := cache.New[int, int](8)
	for i := range 100 {
		c.Put(i, i)
		if c.Len() > 8 {
			t.Fatalf("%d entries after %d puts", c.Len(), i+1)
		}
	}
	if v, ok := c.Get(99); !ok || v != 99 {
		t.Fatal("the latest entry was evicted to make room for itself")
	}
}

func TestTheFirstValueStoredIsTheOneEveryoneShares(t *testing.T) {
	c := cache.New[string, *int](4)
	first, second := new(int), new(int)
	if got := c.Put("k", first); got != first {
		t.Fatal("the first put did not keep its value")
	}
	if got := c.Put("k", second); got != first {
		t.Fatal("a second put replaced the shared value")
	}
}

func TestASizeOfZeroCachesNothing(t *testing.T) {
	c := cache.New[int, int](0)
	c.Put(1, 1)
	if _, ok := c.Get(1); ok || c.Len() != 0 {
		t.Fatal("a zero-size map kept a value")
	}
}

func TestConcurrentUseIsRaceFree(t *testing.T) {
	c := cache.New[int, int](16)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				c.Put((g*1000+i)%64, i)
				c.Get(i % 64)
			}
		}()
	}
	wg.Wait()
	if c.Len() > 16 {
		t.Fatalf("%d entries", c.Len())
	}
}
