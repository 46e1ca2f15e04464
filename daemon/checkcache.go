package garmd

import (
	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/checkcache"
)

// openCheckCache opens --check-cache, when it is set, and answers the keys
// its record vouches for, for the first load. A cache that cannot be
// opened or a record that cannot be used is logged and left aside: the
// load then checks every file, as it does with no cache.
func (d *Daemon) openCheckCache() *artifact.Checked {
	if d.cfg.CheckCache == "" {
		return nil
	}
	cache, err := checkcache.Open(d.cfg.CheckCache)
	if err != nil {
		d.logger.Warn("garmd: the check cache is not used; every descriptor file is checked", "check_cache", d.cfg.CheckCache, "error", err.Error())
		return nil
	}
	d.checkCache = cache
	checked, err := cache.Checked()
	if err != nil {
		d.logger.Warn("garmd: the check cache's record is not used; every descriptor file is checked", "check_cache", d.cfg.CheckCache, "error", err.Error())
		return nil
	}
	return checked
}

// recordChecked records what gen, mounted, was built from, for the next
// start. A record that cannot be written is logged; it costs the next
// start its shortcut, nothing else.
func (d *Daemon) recordChecked(gen *catalogue.Generation) {
	if d.checkCache == nil {
		return
	}
	keys := gen.FileKeys()
	wrote, err := d.checkCache.Record(keys)
	switch {
	case err != nil:
		d.logger.Warn("garmd: the check cache's record was not written", "check_cache", d.cfg.CheckCache, "error", err.Error())
	case wrote:
		d.logger.Info("garmd: check cache recorded", "check_cache", d.cfg.CheckCache, "digest", gen.Digest, "files", len(keys))
	}
}
