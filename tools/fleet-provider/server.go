package main

// The provider protocol, kept thin: decode, call the decision (decide.go) or the action (apply.go,
// render.go), encode. The engine's Cancel (a signal to `pulumi up`) cancels every action in flight.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"

	pbempty "google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

type server struct {
	pulumirpc.UnimplementedResourceProviderServer
	version string
	// Cancelled by the engine's Cancel: every apply, wait and delete stops promptly.
	ctx    context.Context
	cancel context.CancelFunc

	mu sync.Mutex
	// The one cluster of a provider configured without `clusters`, else the clusters by key.
	cluster  *cluster
	clusters map[string]*cluster
}

func newServer(version string) *server {
	ctx, cancel := context.WithCancel(context.Background())
	return &server{version: version, ctx: ctx, cancel: cancel}
}

func (s *server) GetPluginInfo(context.Context, *pbempty.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: s.version}, nil
}

func (s *server) Cancel(context.Context, *pbempty.Empty) (*pbempty.Empty, error) {
	s.cancel()
	return &pbempty.Empty{}, nil
}

func (s *server) GetSchema(context.Context, *pulumirpc.GetSchemaRequest) (*pulumirpc.GetSchemaResponse, error) {
	return &pulumirpc.GetSchemaResponse{Schema: `{"name":"` + packageName + `"}`}, nil
}

func (s *server) CheckConfig(_ context.Context, req *pulumirpc.CheckRequest) (*pulumirpc.CheckResponse, error) {
	return &pulumirpc.CheckResponse{Inputs: req.GetNews()}, nil
}

// DiffConfig never replaces: a new kubeconfig or context for the same cluster changes no pair.
func (s *server) DiffConfig(_ context.Context, req *pulumirpc.DiffRequest) (*pulumirpc.DiffResponse, error) {
	changes := pulumirpc.DiffResponse_DIFF_NONE
	if !sameStruct(req.GetOldInputs(), req.GetNews()) {
		changes = pulumirpc.DiffResponse_DIFF_SOME
	}
	return &pulumirpc.DiffResponse{Changes: changes}, nil
}

func (s *server) Configure(_ context.Context, req *pulumirpc.ConfigureRequest) (*pulumirpc.ConfigureResponse, error) {
	var cfg Config
	if req.GetArgs() != nil {
		if err := fromStruct(req.GetArgs(), &cfg); err != nil {
			return nil, fmt.Errorf("provider configuration: %w", err)
		}
	}
	s.mu.Lock()
	s.cluster, s.clusters = &cluster{config: cfg}, map[string]*cluster{}
	for key, c := range cfg.Clusters {
		s.clusters[key] = &cluster{config: c}
	}
	s.mu.Unlock()
	return &pulumirpc.ConfigureResponse{AcceptSecrets: false, SupportsPreview: true}, nil
}

func (s *server) Check(_ context.Context, req *pulumirpc.CheckRequest) (*pulumirpc.CheckResponse, error) {
	if t := req.GetType(); t != "" && t != bundleDeploymentTk && t != clusterSetupTk && t != bundleContentTk {
		return nil, fmt.Errorf("unknown resource type %s", req.GetType())
	}
	if isContentURN(req.GetUrn()) {
		return checkContent(req), nil
	}
	var failures []*pulumirpc.CheckFailure
	if !containsUnknown(req.GetNews()) {
		var spec Spec
		if err := fromStruct(req.GetNews(), &spec); err != nil {
			failures = append(failures, &pulumirpc.CheckFailure{Reason: err.Error()})
		} else if err := spec.checkObjects(); err != nil {
			failures = append(failures, &pulumirpc.CheckFailure{Property: "objects", Reason: err.Error()})
		} else if _, err := propagation(spec.DeletePolicy.Propagation); err != nil {
			failures = append(failures, &pulumirpc.CheckFailure{Property: "deletePolicy", Reason: err.Error()})
		} else if _, err := compileHealthChecks(spec.HealthChecks); err != nil {
			failures = append(failures, &pulumirpc.CheckFailure{Property: "healthChecks", Reason: err.Error()})
		}
	}
	return &pulumirpc.CheckResponse{Inputs: req.GetNews(), Failures: failures}, nil
}

func (s *server) Diff(_ context.Context, req *pulumirpc.DiffRequest) (*pulumirpc.DiffResponse, error) {
	if isContentURN(req.GetUrn()) {
		// Named by its digest: the same name is the same content.
		return &pulumirpc.DiffResponse{Changes: pulumirpc.DiffResponse_DIFF_NONE}, nil
	}
	if containsUnknown(req.GetNews()) {
		return &pulumirpc.DiffResponse{Changes: pulumirpc.DiffResponse_DIFF_SOME}, nil
	}
	var news Spec
	olds, err := pairState(req.GetOldInputs(), req.GetOlds())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.GetUrn(), err)
	}
	if err := fromStruct(req.GetNews(), &news); err != nil {
		return nil, fmt.Errorf("%s: inputs: %w", req.GetUrn(), err)
	}
	// The manifests where this process has them, for a preview's per-field paths of a changed object; the
	// digests decide either way, so an unchanged pair (most of them) decodes nothing.
	if changedDigests(olds.Spec, news) {
		_, _ = withContent(req.GetUrn(), &olds.Spec), withContent(req.GetUrn(), &news)
	}
	d := diffPair(&olds, news)
	resp := &pulumirpc.DiffResponse{Changes: pulumirpc.DiffResponse_DIFF_NONE, HasDetailedDiff: true, DetailedDiff: map[string]*pulumirpc.PropertyDiff{}}
	if d.Changes {
		resp.Changes = pulumirpc.DiffResponse_DIFF_SOME
	}
	for path, kind := range d.Detailed {
		resp.DetailedDiff[path] = &pulumirpc.PropertyDiff{Kind: kind, InputDiff: true}
		resp.Diffs = append(resp.Diffs, path)
	}
	if d.Retry != "" && len(d.Detailed) == 0 {
		// Shown as a change of the applied ID; the reason is in the pair's messages.
		resp.DetailedDiff["deploymentId"] = &pulumirpc.PropertyDiff{Kind: pulumirpc.PropertyDiff_UPDATE}
		resp.Diffs = append(resp.Diffs, "deploymentId")
	}
	return resp, nil
}

func (s *server) Create(_ context.Context, req *pulumirpc.CreateRequest) (*pulumirpc.CreateResponse, error) {
	if isContentURN(req.GetUrn()) {
		return &pulumirpc.CreateResponse{Id: req.GetName(), Properties: emptyOutputs()}, nil
	}
	var spec Spec
	if err := fromStruct(req.GetProperties(), &spec); err != nil {
		return nil, err
	}
	if req.GetPreview() {
		return &pulumirpc.CreateResponse{Properties: previewOutputs(req.GetProperties(), req.GetUrn(), nil)}, nil
	}
	if err := withContent(req.GetUrn(), &spec); err != nil {
		return nil, err
	}
	prev, err := adopted(spec)
	if err != nil {
		return nil, err
	}
	spec.namespacesApart = isSetupURN(req.GetUrn())
	st, err := s.deploy(prev, spec, true)
	if err != nil {
		return nil, err
	}
	props, err := toStruct(recorded(Outputs{Spec: spec, Status: st}))
	if err != nil {
		return nil, err
	}
	return &pulumirpc.CreateResponse{Id: req.GetName(), Properties: props}, nil
}

func (s *server) Update(_ context.Context, req *pulumirpc.UpdateRequest) (*pulumirpc.UpdateResponse, error) {
	if isContentURN(req.GetUrn()) {
		return &pulumirpc.UpdateResponse{Properties: emptyOutputs()}, nil
	}
	var news Spec
	olds, err := pairState(req.GetOldInputs(), req.GetOlds())
	if err != nil {
		return nil, err
	}
	if err := fromStruct(req.GetNews(), &news); err != nil {
		return nil, err
	}
	if req.GetPreview() {
		return &pulumirpc.UpdateResponse{Properties: previewOutputs(req.GetNews(), req.GetUrn(), olds.Messages)}, nil
	}
	if err := withContent(req.GetUrn(), &news); err != nil {
		return nil, err
	}
	// The last set's manifests are not needed (prune and the ignored fields go by keys and digests), only used where held.
	_ = withContent(req.GetUrn(), &olds.Spec)
	news.namespacesApart = isSetupURN(req.GetUrn())
	st, err := s.deploy(&olds, news, false)
	if err != nil {
		return nil, err
	}
	props, err := toStruct(recorded(Outputs{Spec: news, Status: st}))
	if err != nil {
		return nil, err
	}
	return &pulumirpc.UpdateResponse{Properties: props}, nil
}

// deploy applies (or renders) a pair. Its error is only for a provider that cannot even start (no
// configuration); a cluster that cannot be reached is the pair's ErrApplied. creating: the pair's first
// apply, which takes over no field manager's fields, so adopting unchanged objects writes nothing.
func (s *server) deploy(prev *Outputs, spec Spec, creating bool) (Status, error) {
	c, err := s.configured(spec.Cluster)
	if err != nil {
		return Status{}, err
	}
	if dir := c.config.RenderYamlToDirectory; dir != "" {
		return pairOwnPanic(prev, func() Status { return renderPair(dir, prev, spec) }), nil
	}
	rm, err := c.manager()
	if err != nil {
		st, _ := carriedStatus(prev)
		st.State, st.Messages = StateErrApplied, []string{err.Error()}
		return st, nil
	}
	var before *Status
	if prev != nil {
		before = &prev.Status
	}
	st := pairOwnPanic(prev, func() Status { return applyPair(s.ctx, rm, prev, spec, !creating) })
	return announced(s.ctx, rm.Client(), actionApply, before, told(st, spec), spec), nil
}

// pairOwnPanic runs one pair's apply; a panic in it (a library meeting content it does not expect)
// is that pair's ErrApplied, keeping what the pair had: the provider is one process for every pair
// of the stack, and a crash would fail them all. A panic in a goroutine a library starts is not
// caught here (Go cannot), only one on the call's own stack.
func pairOwnPanic(prev *Outputs, apply func() Status) (st Status) {
	defer func() {
		if r := recover(); r != nil {
			st, _ = carriedStatus(prev)
			st.State = StateErrApplied
			st.Messages = []string{fmt.Sprintf("the provider failed while applying this bundle deployment, which alone fails: %v", r)}
		}
	}()
	return apply()
}

// previewOutputs are a preview's outputs of a pair: its inputs without the set's objects (as recorded).
// A setup's messages stay as its last apply left them (none when new): the pairs on its cluster read
// its refused namespaces there, and unknown messages would show each of them as changing whenever the
// setup changes.
func previewOutputs(inputs *structpb.Struct, urn string, messages []string) *structpb.Struct {
	out := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(inputs.GetFields())+1)}
	for k, v := range inputs.GetFields() {
		if k != "objects" && k != "secretObjects" && k != "adopt" && k != "hooks" {
			out.Fields[k] = v
		}
	}
	if isSetupURN(urn) {
		lines := make([]*structpb.Value, 0, len(messages))
		for _, m := range messages {
			lines = append(lines, structpb.NewStringValue(m))
		}
		out.Fields["messages"] = structpb.NewListValue(&structpb.ListValue{Values: lines})
	}
	return out
}

// stateOf decodes a pair as the state holds it (pairState), with the configured cluster.
func (s *server) stateOf(inputs, outputs *structpb.Struct) (Outputs, *cluster, error) {
	olds, err := pairState(inputs, outputs)
	if err != nil {
		return olds, nil, err
	}
	c, err := s.configured(olds.Cluster)
	return olds, c, err
}

func (s *server) Delete(_ context.Context, req *pulumirpc.DeleteRequest) (_ *pbempty.Empty, err error) {
	defer errorOnPanic(req.GetUrn(), &err)
	if isContentURN(req.GetUrn()) {
		return &pbempty.Empty{}, nil
	}
	olds, c, err := s.stateOf(req.GetOldInputs(), req.GetProperties())
	if err != nil {
		return nil, err
	}
	if dir := c.config.RenderYamlToDirectory; dir != "" {
		unrenderPair(dir, olds)
		return &pbempty.Empty{}, nil
	}
	rm, err := c.manager()
	if err == nil {
		err = deletePair(s.ctx, rm, olds)
	}
	if err != nil && c.config.DeleteUnreachable && unreachable(err) {
		return &pbempty.Empty{}, nil
	}
	return &pbempty.Empty{}, err
}

// unreachable: the API server did not answer (no connection, no route, a timeout), as opposed to
// answering with a refusal.
func unreachable(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "no such host")
}

// Read (a refresh) looks for drift; the inputs stay as they were.
func (s *server) Read(_ context.Context, req *pulumirpc.ReadRequest) (_ *pulumirpc.ReadResponse, err error) {
	defer errorOnPanic(req.GetUrn(), &err)
	if isContentURN(req.GetUrn()) {
		return contentRead(req), nil
	}
	olds, c, err := s.stateOf(req.GetInputs(), req.GetProperties())
	if err != nil {
		return nil, err
	}
	olds.Live = nil
	if c.config.RenderYamlToDirectory == "" {
		if rm, err := c.manager(); err == nil {
			before := olds.Status
			olds.Status, olds.Live = s.refreshed(rm, req.GetUrn(), olds)
			// A dry run's refusal may quote a value as an apply's does.
			olds.Status = announced(s.ctx, rm.Client(), actionRefresh, &before, told(olds.Status, olds.Spec), olds.Spec)
		}
	}
	props, err := toStruct(recorded(olds))
	if err != nil {
		return nil, err
	}
	return &pulumirpc.ReadResponse{Id: req.GetId(), Properties: props, Inputs: req.GetInputs()}, nil
}

// errorOnPanic makes a panic in a delete or a refresh that resource's error, not the process's end
// (which would fail every other resource of the update).
func errorOnPanic(urn string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s: the provider failed on this resource: %v", urn, r)
	}
}

// configured is the cluster a pair names (its spec's `cluster`), or the provider's only one.
func (s *server) configured(key string) (*cluster, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cluster == nil {
		return nil, fmt.Errorf("the %s provider was not configured", packageName)
	}
	if key == "" {
		return s.cluster, nil
	}
	if c, ok := s.clusters[key]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("cluster %q is not in the %s provider's configuration (a cluster removed from the stack keeps its access there until its pairs are deleted when `npm run up` runs the update: it reads that access from the state)", key, packageName)
}

func sameStruct(a, b *structpb.Struct) bool {
	ja, _ := a.MarshalJSON()
	jb, _ := b.MarshalJSON()
	return string(ja) == string(jb)
}
