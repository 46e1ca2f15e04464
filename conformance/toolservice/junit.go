package toolservice

import (
	"encoding/xml"
	"fmt"
	"io"
)

type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes results as one JUnit XML test suite, for CI systems
// of other ecosystems; each case's promise is its failure's text.
func WriteJUnit(w io.Writer, results []Result) error {
	s := junitSuite{Name: "garm.toolservice", Tests: len(results)}
	for _, r := range results {
		jc := junitCase{Name: r.Case.Name, Classname: "garm.toolservice", Time: fmt.Sprintf("%.3f", r.Elapsed.Seconds())}
		switch {
		case r.Skipped:
			s.Skipped++
			jc.Skipped = &junitMessage{Message: r.Reason}
		case !r.Passed:
			s.Failures++
			jc.Failure = &junitMessage{Message: r.Reason, Text: r.Case.Promise}
		}
		s.Cases = append(s.Cases, jc)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
