package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// module is the module whose root holds the example sources.
const module = "github.com/garm-dev/garm"

// repoRoot finds the repository root: the directory of the go.mod that
// declares the module, above this source file (where `go run` and `go
// test` compiled it) or else above the working directory.
func repoRoot() (string, error) {
	var starts []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, dir := range starts {
		for {
			if declaresModule(filepath.Join(dir, "go.mod")) {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("cannot find the repository root (a go.mod declaring %s) above the sources or the working directory; run from the repository", module)
}

func declaresModule(gomod string) bool {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return false
	}
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) == 2 && fields[0] == "module" {
			return fields[1] == module
		}
	}
	return false
}

// clusterBinaries defaults the cluster's nats-server and garmd binaries to
// those make builds into .tmp/bin, and checks that both exist.
func clusterBinaries(o *Options) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	var problems []string
	for _, b := range []struct {
		path *string
		name string
	}{{&o.NATSServerBinary, "nats-server"}, {&o.GarmdBinary, "garmd"}} {
		if *b.path == "" {
			*b.path = filepath.Join(root, ".tmp", "bin", b.name)
		}
		if _, err := os.Stat(*b.path); err != nil {
			problems = append(problems, fmt.Sprintf("--%s: %v (make %s builds it)", b.name, err, b.name))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("the cluster runs its nodes and replicas as processes: %s", strings.Join(problems, "; "))
	}
	return nil
}
