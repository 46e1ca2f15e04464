package garmd

import (
	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/checkcache"
)

// openCheckCache opens --check-cache, when it is set, and puts what its
// record vouches for into o, for the first load and mount. A cache that
// cannot be opened or a record that cannot be used is logged and left
// aside: the load then checks every file and the mount compiles every
// input, as they do with no cache.
func (d *Daemon) openCheckCache(o *catalogue.Options) {
	if d.cfg.CheckCache == "" {
		return
	}
	cache, err := checkcache.Open(d.cfg.CheckCache)
	if err != nil {
		d.logger.Warn("garmd: the check cache is not used; every descriptor file is checked", "check_cache", d.cfg.CheckCache, "error", err.Error())
		return
	}
	d.checkCache = cache
	checks, err := cache.Read()
	if err != nil {
		d.logger.Warn("garmd: the check cache's record is not used; every descriptor file is checked", "check_cache", d.cfg.CheckCache, "error", err.Error())
		return
	}
	if checks.Files != nil {
		o.Checked = artifact.NewChecked(checks.Files)
	}
	if checks.Validated != nil {
		o.Validated = artifact.NewChecked(checks.Validated)
	}
}

// recordChecked records what gen, mounted, was built from and compiled,
// for the next start. A record that cannot be written is logged; it costs
// the next start its shortcut, nothing else.
func (d *Daemon) recordChecked(gen *catalogue.Generation) {
	if d.checkCache == nil {
		return
	}
	checks := checkcache.Checks{Files: gen.FileKeys(), Validated: gen.ValidatedKeys()}
	wrote, err := d.checkCache.Write(checks)
	switch {
	case err != nil:
		d.logger.Warn("garmd: the check cache's record was not written", "check_cache", d.cfg.CheckCache, "error", err.Error())
	case wrote:
		d.logger.Info("garmd: check cache recorded", "check_cache", d.cfg.CheckCache, "digest", gen.Digest,
			"files", len(checks.Files), "validated_files", len(checks.Validated))
	}
}
