package wirestageextension

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/extension/extensioncapabilities"
)

var _ extensioncapabilities.ConfigSnapshotWatcher = (*wireStage)(nil)

// ErrPipelineOrder is matched by the error that refuses a configuration in
// which a processor with a stage does not come first in a pipeline fed by a
// receiver using the extension.
var ErrPipelineOrder = errors.New("wirestage: a processor with a stage must come first in its pipelines")

// NotifyConfigSnapshot checks, before the pipelines start, that the stages
// mean what the pipelines say. The stage runs before every processor of the
// pipeline, and a processor recognises the requests its stage handled by a
// mark in the request context. So, in every pipeline fed by a receiver that
// uses this extension, the processors with a stage must come first (only
// memory_limiter, which neither changes data nor detaches the context, may
// precede them) and in the order of stages; and a processor with a stage
// for a signal must be in a pipeline of that receiver for that signal.
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

type pipelineConfig struct {
	Receivers  []string `mapstructure:"receivers"`
	Processors []string `mapstructure:"processors"`
	Exporters  []string `mapstructure:"exporters"`
}

func checkPipelines(self component.ID, stages []component.ID, conf *confmap.Conf) error {
	users := receiversUsing(self.String(), conf.Get("receivers"))
	if len(users) == 0 {
		return nil
	}
	var errs []error
	for _, id := range sortedKeys(users) {
		if others := users[id]; len(others) > 0 {
			errs = append(errs, fmt.Errorf("%w: receiver %s lists %s and %s in the same middlewares; use one wirestage per server and list all the stages in it",
				ErrPipelineOrder, id, self, strings.Join(others, ", ")))
		}
	}
	var pipelines map[string]pipelineConfig
	sub, err := conf.Sub("service::pipelines")
	if err != nil {
		return nil // the service reports its own configuration errors
	}
	if err := sub.Unmarshal(&pipelines, confmap.WithIgnoreUnused()); err != nil {
		return nil
	}
	isStage := make(map[string]int, len(stages))
	for i, id := range stages {
		isStage[id.String()] = i
	}
	names := make([]string, 0, len(pipelines))
	for name := range pipelines {
		names = append(names, name)
	}
	sort.Strings(names)

	// fed[signal][stage] reports whether the stage is in a pipeline of the
	// signal fed by a receiver using the extension; in[signal][stage]
	// whether it is in any pipeline of the signal.
	fed, in := map[string]map[string]bool{}, map[string]map[string]bool{}
	for _, name := range names {
		p := pipelines[name]
		signal, _, _ := strings.Cut(name, "/")
		if in[signal] == nil {
			in[signal], fed[signal] = map[string]bool{}, map[string]bool{}
		}
		for _, proc := range p.Processors {
			if _, ok := isStage[proc]; ok {
				in[signal][proc] = true
			}
		}
		if !slices.ContainsFunc(p.Receivers, func(r string) bool { _, ok := users[r]; return ok }) {
			continue
		}
		first, last := "", -1
		for _, proc := range p.Processors {
			pos, staged := isStage[proc]
			switch {
			case staged && first != "":
				errs = append(errs, fmt.Errorf("%w: pipeline %s: %s comes after %s, but its stage runs before every processor, and %s would not see the mark of the requests the stage handled; put %s before %s (only memory_limiter may come first)",
					ErrPipelineOrder, name, proc, first, proc, proc, first))
			case staged && pos < last:
				errs = append(errs, fmt.Errorf("%w: pipeline %s: %s comes after %s, but %s lists them the other way round; use the same order in both",
					ErrPipelineOrder, name, stages[last], proc, self))
			case staged:
				fed[signal][proc] = true
				last = pos
			case first == "" && !transparent(proc):
				first = proc
			}
		}
	}
	signals := make([]string, 0, len(in))
	for s := range in {
		signals = append(signals, s)
	}
	sort.Strings(signals)
	for _, signal := range signals {
		for _, id := range stages {
			if in[signal][id.String()] && !fed[signal][id.String()] {
				errs = append(errs, fmt.Errorf("%w: %s is in a %s pipeline, but in none fed by the receivers using %s (%s), so its stage would handle data that does not go through it; remove it from %s stages or add it to those pipelines",
					ErrPipelineOrder, id, signal, self, strings.Join(sortedKeys(users), ", "), self))
			}
		}
	}
	return errors.Join(errs...)
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

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
