// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/extension/extensioncapabilities"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension/internal/metadata"
)

var _ extensioncapabilities.ConfigSnapshotWatcher = (*wireStage)(nil)

// ErrPipelineOrder is matched by the error that refuses a configuration in
// which the pipelines do not go with the stages: a processor with a stage
// that does not come first in a pipeline fed by a receiver using the
// extension, or whose data could not be told from the request its stage
// handled.
var ErrPipelineOrder = errors.New("wirestage: a processor with a stage must come first in its pipelines")

// NotifyConfigSnapshot checks, before the pipelines start, that the stages
// mean what the pipelines say (see checkPipelines). The wirestageconverter
// runs the same check on the whole configuration in `validate` too; this
// one guards distributions built without it.
func (w *wireStage) NotifyConfigSnapshot(_ context.Context, snapshot extensioncapabilities.ConfigSnapshot) error {
	if snapshot == nil {
		return nil
	}
	conf := snapshot.Effective()
	if conf == nil {
		return nil
	}
	return checkPipelines(w.id, w.cfg.Stages, conf)
}

// DivertChecker reports whether the processor id, configured by its section
// of the configuration, diverts (removes what its stage forwarded).
type DivertChecker func(id component.ID, section *confmap.Conf) (bool, error)

// CheckConfig checks a whole Collector configuration, as it is before any
// component is created, the way the wirestage extensions in it check it
// when the Collector starts: each extension's pipelines (see
// NotifyConfigSnapshot) and, with diverts, that a diverting stage is
// acknowledged with divert_all_pipelines. Configuration errors of the
// components themselves are left to the Collector, which names them.
func CheckConfig(conf *confmap.Conf, diverts DivertChecker) error {
	var service struct {
		Extensions []string `mapstructure:"extensions"`
	}
	if sub, err := conf.Sub("service"); err != nil || sub.Unmarshal(&service, confmap.WithIgnoreUnused()) != nil {
		return nil // the service reports its own configuration errors
	}
	enabled := service.Extensions
	extensions, _ := conf.Get("extensions").(map[string]any)
	var errs []error
	for _, name := range enabled {
		var self component.ID
		if self.UnmarshalText([]byte(name)) != nil || self.Type() != metadata.Type || extensions == nil {
			continue
		}
		cfg := createDefaultConfig().(*Config)
		section, err := conf.Sub("extensions::" + name)
		if err != nil || section.Unmarshal(cfg) != nil {
			continue
		}
		if err := checkPipelines(self, cfg.Stages, conf); err != nil {
			errs = append(errs, fmt.Errorf("extensions::%s: %w", self, err))
		}
		if diverts == nil || cfg.DivertAllPipelines {
			continue
		}
		inPipelines := processorsInPipelines(conf)
		for _, id := range cfg.Stages {
			if !inPipelines[id.String()] {
				continue // no stage: the processor does not start
			}
			section, err := conf.Sub("processors::" + id.String())
			if err != nil {
				continue
			}
			if d, err := diverts(id, section); err == nil && d {
				errs = append(errs, fmt.Errorf("extensions::%s: %w", self, divertNotAcknowledged(id)))
			}
		}
	}
	return errors.Join(errs...)
}

// divertNotAcknowledged is the one refusal of a diverting stage, at start
// (Register) and in CheckConfig.
func divertNotAcknowledged(id component.ID) error {
	return fmt.Errorf("%w: %s diverts before the receiver decodes, which removes the diverted resources from every pipeline the receiver feeds; "+
		"set divert_all_pipelines: true to accept that, or use mode: tee", ErrDivertNotAcknowledged, id)
}

type pipelineConfig struct {
	Receivers  []string `mapstructure:"receivers"`
	Processors []string `mapstructure:"processors"`
	Exporters  []string `mapstructure:"exporters"`
}

// processorsInPipelines returns the IDs of the processors that are in some
// pipeline, as written.
func processorsInPipelines(conf *confmap.Conf) map[string]bool {
	pipelines, _ := readPipelines(conf)
	in := map[string]bool{}
	for _, p := range pipelines {
		for _, proc := range p.Processors {
			in[proc] = true
		}
	}
	return in
}

func readPipelines(conf *confmap.Conf) (map[string]pipelineConfig, error) {
	var pipelines map[string]pipelineConfig
	sub, err := conf.Sub("service::pipelines")
	if err != nil {
		return nil, err
	}
	if err := sub.Unmarshal(&pipelines, confmap.WithIgnoreUnused()); err != nil {
		return nil, err
	}
	return pipelines, nil
}

// checkPipelines checks that the stages of extension self mean what the
// pipelines say. The stage runs before every processor of the pipelines the
// receivers using self feed ("staged pipelines"); a processor recognises
// the request its stage handled by a mark in the request context, which it
// removes from what it passes on (PassOnTraces). So:
//
//   - in every staged pipeline the processors with a stage come first (only
//     memory_limiter, which neither changes data nor detaches the context,
//     may precede them) and in the order of stages;
//   - a processor with a stage for a signal is in a staged pipeline of that
//     signal, or its stage would handle data that does not go through it;
//   - a staged pipeline that feeds, through connectors, a pipeline holding a
//     processor with a stage holds that processor too: otherwise the data
//     arrives with the processor's mark still on and could not be told from
//     the request the stage handled.
//
// Pipelines fed only by connectors or other receivers are otherwise free:
// their processors process what they receive.
func checkPipelines(self component.ID, stages []component.ID, conf *confmap.Conf) error {
	users := receiversUsing(self.String(), conf.Get("receivers"))
	if len(users) == 0 {
		return nil
	}
	var errs []error
	for _, id := range slices.Sorted(maps.Keys(users)) {
		if others := users[id]; len(others) > 0 {
			errs = append(errs, fmt.Errorf("%w: receiver %s lists %s and %s in the same middlewares; use one wirestage per server and list all the stages in it",
				ErrPipelineOrder, id, self, strings.Join(others, ", ")))
		}
	}
	pipelines, err := readPipelines(conf)
	if err != nil {
		return errors.Join(errs...) // the service reports its own configuration errors
	}
	isStage := make(map[string]int, len(stages))
	for i, id := range stages {
		isStage[id.String()] = i
	}
	names := slices.Sorted(maps.Keys(pipelines))
	staged := map[string]bool{}
	for _, name := range names {
		staged[name] = slices.ContainsFunc(pipelines[name].Receivers, func(r string) bool { _, ok := users[r]; return ok })
	}
	fedBy := func(name string) string {
		var rs []string
		for _, r := range pipelines[name].Receivers {
			if _, ok := users[r]; ok {
				rs = append(rs, r)
			}
		}
		return strings.Join(rs, ", ")
	}

	// inStaged[signal][stage] reports whether the stage is in a staged
	// pipeline of the signal; holders[signal][stage] lists the pipelines of
	// the signal that hold it.
	inStaged, holders := map[string]map[string]bool{}, map[string]map[string][]string{}
	for _, name := range names {
		p := pipelines[name]
		signal := pipelineSignal(name)
		if inStaged[signal] == nil {
			inStaged[signal], holders[signal] = map[string]bool{}, map[string][]string{}
		}
		for _, proc := range p.Processors {
			if _, ok := isStage[proc]; ok {
				holders[signal][proc] = append(holders[signal][proc], name)
				if staged[name] {
					inStaged[signal][proc] = true
				}
			}
		}
		if !staged[name] {
			continue
		}
		first, last := "", -1
		for _, proc := range p.Processors {
			pos, isStaged := isStage[proc]
			switch {
			case isStaged && first != "":
				errs = append(errs, fmt.Errorf("%w: pipeline %s (fed by %s, which uses %s): %s comes after %s, but its stage runs before every processor, and %s would not see the mark of the requests the stage handled; put %s before %s (only memory_limiter may come first)",
					ErrPipelineOrder, name, fedBy(name), self, proc, first, proc, proc, first))
			case isStaged && pos < last:
				errs = append(errs, fmt.Errorf("%w: pipeline %s (fed by %s, which uses %s): %s comes after %s, but %s lists them the other way round; use the same order in both",
					ErrPipelineOrder, name, fedBy(name), self, proc, stages[last], self))
			case isStaged:
				last = pos
			case first == "" && !transparent(proc):
				first = proc
			}
		}
	}
	for _, signal := range slices.Sorted(maps.Keys(holders)) {
		for _, id := range stages {
			if where := holders[signal][id.String()]; len(where) > 0 && !inStaged[signal][id.String()] {
				errs = append(errs, fmt.Errorf("%w: %s is in %s %s, but in no %s pipeline fed by the receivers using %s (%s), so its stage would handle data that does not go through it; remove it from %s stages or add it to such a pipeline",
					ErrPipelineOrder, id, plural(len(where), "pipeline", "pipelines"), strings.Join(where, ", "), signal, self, strings.Join(slices.Sorted(maps.Keys(users)), ", "), self))
			}
		}
	}
	errs = append(errs, checkConnectorPaths(self, stages, pipelines, staged, fedBy, conf)...)
	return errors.Join(errs...)
}

// checkConnectorPaths refuses a staged pipeline that, through connectors,
// feeds a pipeline of the same signal holding a processor with a stage
// which the staged pipeline does not hold.
func checkConnectorPaths(self component.ID, stages []component.ID, pipelines map[string]pipelineConfig, staged map[string]bool, fedBy func(string) string, conf *confmap.Conf) []error {
	connectors, _ := conf.Get("connectors").(map[string]any)
	if len(connectors) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(pipelines))
	// feeds[p] lists the pipelines p's connectors feed, each with the
	// connector.
	type edge struct{ to, via string }
	feeds := map[string][]edge{}
	for _, from := range names {
		for _, exp := range pipelines[from].Exporters {
			if _, ok := connectors[exp]; !ok {
				continue
			}
			for _, to := range names {
				if slices.Contains(pipelines[to].Receivers, exp) {
					feeds[from] = append(feeds[from], edge{to, exp})
				}
			}
		}
	}
	var errs []error
	for _, from := range names {
		if !staged[from] {
			continue
		}
		signal := pipelineSignal(from)
		// Walk every pipeline reachable from the staged one, remembering
		// the first connector on the way for the message.
		seen := map[string]bool{from: true}
		type step struct{ name, via string }
		queue := []step{}
		for _, e := range feeds[from] {
			queue = append(queue, step{e.to, e.via})
		}
		for len(queue) > 0 {
			s := queue[0]
			queue = queue[1:]
			if seen[s.name] {
				continue
			}
			seen[s.name] = true
			for _, e := range feeds[s.name] {
				queue = append(queue, step{e.to, s.via})
			}
			if pipelineSignal(s.name) != signal {
				continue
			}
			for _, id := range stages {
				proc := id.String()
				if slices.Contains(pipelines[s.name].Processors, proc) && !slices.Contains(pipelines[from].Processors, proc) {
					errs = append(errs, fmt.Errorf("%w: pipeline %s (fed by %s, which uses %s) feeds pipeline %s through connector %s; %s holds %s but %s does not, so the data arrives with the mark of %s's stage and %s in %s could not tell it from the request that stage handled; add %s first in %s",
						ErrPipelineOrder, from, fedBy(from), self, s.name, s.via, s.name, proc, from, proc, proc, s.name, proc, from))
				}
			}
		}
	}
	return errs
}

// pipelineSignal returns the signal part of a pipeline ID.
func pipelineSignal(name string) string {
	signal, _, _ := strings.Cut(name, "/")
	return signal
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// transparent reports whether a processor may precede the stages: it
// neither changes the data nor detaches the request context.
func transparent(id string) bool {
	typ, _, _ := strings.Cut(id, "/")
	return typ == "memory_limiter"
}

// receiversUsing returns the IDs of the receivers whose configuration names
// the extension in a middlewares list, each with the other wirestage
// extensions named in the same lists.
func receiversUsing(ext string, receivers any) map[string][]string {
	users := map[string][]string{}
	m, _ := receivers.(map[string]any)
	for id, cfg := range m {
		if found, others := namesMiddleware(ext, cfg); found {
			users[id] = others
		}
	}
	return users
}

// namesMiddleware reports whether a middlewares list under v names ext,
// and which other wirestage extensions those lists name.
func namesMiddleware(ext string, v any) (found bool, others []string) {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if k != "middlewares" {
				f, o := namesMiddleware(ext, sub)
				found, others = found || f, append(others, o...)
				continue
			}
			list, _ := sub.([]any)
			var wirestages []string
			here := false
			for _, item := range list {
				mw, ok := item.(map[string]any)
				if !ok {
					continue
				}
				id := fmt.Sprint(mw["id"])
				switch typ, _, _ := strings.Cut(id, "/"); {
				case id == ext:
					here = true
				case typ == "wirestage":
					wirestages = append(wirestages, id)
				}
			}
			if here {
				found, others = true, append(others, wirestages...)
			}
		}
	case []any:
		for _, sub := range v {
			f, o := namesMiddleware(ext, sub)
			found, others = found || f, append(others, o...)
		}
	}
	return found, others
}
