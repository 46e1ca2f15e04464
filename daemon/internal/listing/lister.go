package listing

import (
	"errors"
	"sync/atomic"

	"github.com/garm-dev/garm/daemon/internal/cache"
	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/chain/visibility"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// Defaults for Options' zero values.
const (
	DefaultShapes      = 64
	DefaultGenerations = 2
)

// Options bound what a Lister keeps.
type Options struct {
	// Shapes is how many caller shapes keep their assembled schemas, per
	// generation. 0 means DefaultShapes.
	Shapes int
	// Generations is how many generations keep their rows and schemas:
	// the serving one, and the one calls pinned before a reload may still
	// be listing. A generation's caches hold it in memory. 0 means
	// DefaultGenerations.
	Generations int
}

// Lister answers ListTools. Its caches are shared by every request, bounded
// (cache.Map), and safe for concurrent use.
type Lister struct {
	shapes    int
	gens      *cache.Map[*catalogue.Generation, *generationCache]
	last      atomic.Pointer[generationCache]
	assembled atomic.Uint64
}

// Stats says what a Lister has done and holds.
type Stats struct {
	// Assembled counts input schemas assembled; a listing served wholly
	// from cache adds nothing.
	Assembled uint64
	// Generations counts the generations cached; Shapes, the caller
	// shapes cached for the generation listed last.
	Generations, Shapes int
}

// New is a Lister with o's bounds.
func New(o Options) *Lister {
	if o.Shapes <= 0 {
		o.Shapes = DefaultShapes
	}
	if o.Generations <= 0 {
		o.Generations = DefaultGenerations
	}
	return &Lister{shapes: o.Shapes, gens: cache.New[*catalogue.Generation, *generationCache](o.Generations)}
}

// Stats is a snapshot of what l has done and holds.
func (l *Lister) Stats() Stats {
	s := Stats{Assembled: l.assembled.Load(), Generations: l.gens.Len()}
	if gc := l.last.Load(); gc != nil {
		s.Shapes = gc.shapes.Len()
	}
	return s
}

// List is the ListTools answer for p from g: every tool p may see (the
// visibility predicate) whose declared audience admits audience, sorted by
// FQN, each with the input schema p's shape may fill in. p must have been
// numbered by g. AUDIENCE_UNSPECIFIED asks for AGENT.
func (l *Lister) List(g *catalogue.Generation, p *call.Principal, audience toolv1.Audience) ([]byte, error) {
	if g == nil || p == nil {
		return nil, errors.New("listing: no generation or no principal")
	}
	asked, ok := audienceBit(audience)
	if !ok {
		return nil, errors.New("listing: an audience that is not PERSON, AGENT or RUNNER")
	}
	gc := l.generation(g)
	shape := p.Shape()
	sc := gc.shape(shape)

	hint := sc.sizeHint.Load()
	if hint == 0 {
		hint = gc.sizeHint.Load()
	}
	body := make([]byte, 0, hint)
	body = append(body, gc.prefix...)
	listed := 0
	_, err := l.each(gc, sc, p, asked, 0, func(t *call.Tool, r *row, schema []byte) bool {
		if listed > 0 {
			body = append(body, ',')
		}
		listed++
		if len(p.Act) > 0 {
			body = append(body, r.delegated...)
		} else {
			body = append(body, r.head...)
		}
		body = append(body, schema...)
		body = append(body, '}')
		return true
	})
	if err != nil {
		return nil, err
	}
	body = append(body, "]}"...)
	if n := int64(len(body)); n > sc.sizeHint.Load() {
		sc.sizeHint.Store(n)
	}
	if n := int64(len(body)); n > gc.sizeHint.Load() {
		gc.sizeHint.Store(n)
	}
	return body, nil
}

// each calls yield, in FQN order from the tool at index from, with every
// tool of gc's generation that p may see (visibility.Check, the one
// predicate) and whose declared audience admits asked, until yield answers
// false. It answers the index after the last tool yielded.
func (l *Lister) each(gc *generationCache, sc *shapeCache, p *call.Principal, asked uint8, from int,
	yield func(t *call.Tool, r *row, schema []byte) bool) (int, error) {
	tools := gc.g.Tools
	shape := p.Shape()
	for i := max(from, 0); i < len(tools); i++ {
		t := tools[i]
		if visibility.Check(p, t) != visibility.Visible {
			continue
		}
		r, err := gc.row(i)
		if err != nil {
			return 0, err
		}
		if r.audiences&asked == 0 {
			continue
		}
		schema, err := sc.schema(t, shape, &l.assembled)
		if err != nil {
			return 0, err
		}
		if !yield(t, r, schema) {
			return i, nil
		}
	}
	return len(tools), nil
}

func (l *Lister) generation(g *catalogue.Generation) *generationCache {
	gc, ok := l.gens.Get(g)
	if !ok {
		gc = l.gens.Put(g, newGenerationCache(g, l.shapes))
	}
	l.last.Store(gc)
	return gc
}
