package garmtool

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/proto"
)

// Service serves tools over NATS micro. Register tools on it (it is a
// toolbind.Registrar, so a generated Serve<Service> does that), then Run it
// once.
type Service struct {
	name    string
	version string
	opts    options
	ready   chan struct{}

	mu        sync.Mutex
	used      bool // Run was called: registration is closed and Run refuses
	endpoints []*endpoint
	bySubject map[string]*endpoint
}

var _ toolbind.Registrar = (*Service)(nil)

// endpoint is one registered tool.
type endpoint struct {
	ref        toolbind.ToolRef
	subject    string
	queueGroup string
	newRequest func() proto.Message
	handle     toolbind.Handler
}

// New returns a Service named name (it names the process in logs and in the
// description of its micro services) at version, a semantic version; a
// leading "v" is stripped, as micro wants bare semver.
func New(name, version string, opts ...Option) *Service {
	return &Service{
		name:      name,
		version:   strings.TrimPrefix(version, "v"),
		opts:      newOptions(opts),
		ready:     make(chan struct{}),
		bySubject: map[string]*endpoint{},
	}
}

// Ready is closed once Run serves: every instance is registered and the NATS
// server has confirmed the subscriptions (unless the connection was down, in
// which case they are sent when it reconnects). It is never closed if Run
// fails to start.
func (s *Service) Ready() <-chan struct{} { return s.ready }

var (
	// A method is "/<package>.<Service>/<Method>" of proto identifiers, so
	// the subject derived from it is literal and valid.
	methodPattern = regexp.MustCompile(`^/([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)/[A-Za-z_][A-Za-z0-9_]*$`)
	hashPattern   = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Endpoint registers one tool: requests on the subject wire derives from
// ref.Method, in the queue group of ref.Service, are decoded into a message
// from newRequest and served by h. It refuses, naming what is wrong: a
// registration after Run; a ref whose method, service or subject disagree
// with each other; a subject already registered; and a descriptor hash or
// contract version other than the ones already registered (one process
// serves one proto package).
func (s *Service) Endpoint(ref toolbind.ToolRef, newRequest func() proto.Message, h toolbind.Handler) error {
	ep, err := newEndpoint(ref, newRequest, h)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used {
		return fmt.Errorf("garmtool: %s registered after Run; register every tool before serving", ref.FQN)
	}
	if prev, ok := s.bySubject[ep.subject]; ok {
		return fmt.Errorf("garmtool: subject %q is registered twice, by %s and by %s", ep.subject, prev.ref.FQN, ref.FQN)
	}
	if len(s.endpoints) > 0 {
		first := s.endpoints[0].ref
		if ref.DescriptorHash != first.DescriptorHash {
			return fmt.Errorf("garmtool: %s has descriptor hash %s, but this service already serves descriptor hash %s (%s); one process serves one proto package",
				ref.FQN, ref.DescriptorHash, first.DescriptorHash, first.FQN)
		}
		if ref.ContractVersion != first.ContractVersion {
			return fmt.Errorf("garmtool: %s has contract version %q, but this service already serves contract version %q (%s)",
				ref.FQN, ref.ContractVersion, first.ContractVersion, first.FQN)
		}
	}
	s.endpoints = append(s.endpoints, ep)
	s.bySubject[ep.subject] = ep
	return nil
}

func newEndpoint(ref toolbind.ToolRef, newRequest func() proto.Message, h toolbind.Handler) (*endpoint, error) {
	if ref.FQN == "" {
		return nil, fmt.Errorf("garmtool: a tool without an FQN (method %q)", ref.Method)
	}
	if h == nil || newRequest == nil {
		return nil, fmt.Errorf("garmtool: %s needs a handler and a request constructor", ref.FQN)
	}
	if m := newRequest(); m == nil || !m.ProtoReflect().IsValid() {
		return nil, fmt.Errorf("garmtool: %s: the request constructor returned no message", ref.FQN)
	}
	match := methodPattern.FindStringSubmatch(ref.Method)
	if match == nil {
		return nil, fmt.Errorf("garmtool: %s: method %q is not /<package>.<Service>/<Method>", ref.FQN, ref.Method)
	}
	if match[1] != ref.Service {
		return nil, fmt.Errorf("garmtool: %s: method %q is not a method of service %q", ref.FQN, ref.Method, ref.Service)
	}
	subject := wire.Subject(ref.Method)
	if ref.Subject != subject {
		return nil, fmt.Errorf("garmtool: %s: subject %q is not the subject of method %q, %q", ref.FQN, ref.Subject, ref.Method, subject)
	}
	if !hashPattern.MatchString(ref.DescriptorHash) {
		return nil, fmt.Errorf("garmtool: %s: descriptor hash %q is not 64 lowercase hex characters", ref.FQN, ref.DescriptorHash)
	}
	if ref.ContractVersion == "" {
		return nil, errors.New("garmtool: " + ref.FQN + ": no contract version")
	}
	return &endpoint{
		ref:        ref,
		subject:    subject,
		queueGroup: wire.QueueGroup(ref.Service),
		newRequest: newRequest,
		handle:     h,
	}, nil
}
