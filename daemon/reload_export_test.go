package garmd

import "github.com/garm-dev/garm/daemon/internal/catalogue"

// ServingGeneration is the generation d serves now, for tests that watch
// generations come and go.
func (d *Daemon) ServingGeneration() *catalogue.Generation { return d.serving.Load() }
