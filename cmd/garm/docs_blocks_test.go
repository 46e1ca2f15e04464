package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// commandFence opens a fenced block of shell commands.
var commandFence = regexp.MustCompile("^```(sh|bash|shell|console|zsh)\\s*$")

// blockMarker is what the line before a command block must be: a doc-test
// marker (a test runs the block) or an illustrative one saying why no test
// does.
var blockMarker = regexp.MustCompile(`^<!-- (doc-test: \w+.*|illustrative: \S.*) -->$`)

// TestEveryCommandBlockInTheDocsIsRunByATestOrMarkedIllustrative holds
// README.md and docs/*.md to the convention: the line before a fenced block
// of shell commands is `<!-- doc-test: KIND ARGS -->`, which a test
// executes, or `<!-- illustrative: WHY -->`, which says why none does. A new
// block that is neither fails here, so a command cannot be added to the docs
// unexecuted without saying so.
func TestEveryCommandBlockInTheDocsIsRunByATestOrMarkedIllustrative(t *testing.T) {
	t.Parallel()
	docs, err := filepath.Glob(repoFile("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, repoFile("README.md"))
	blocks := 0
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		inFence := false
		for i, line := range lines {
			if strings.HasPrefix(line, "```") {
				if !inFence && commandFence.MatchString(line) {
					blocks++
					if i == 0 || !blockMarker.MatchString(lines[i-1]) {
						t.Errorf("%s:%d: a command block is neither run by a test (<!-- doc-test: KIND ARGS -->) nor marked <!-- illustrative: WHY --> on the line before it", doc, i+1)
					}
				}
				inFence = !inFence
			}
		}
	}
	if blocks == 0 {
		t.Fatal("no command block found: the docs moved?")
	}
}
