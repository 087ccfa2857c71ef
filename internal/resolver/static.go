// SPDX-License-Identifier: Apache-2.0

package resolver

import "context"

// staticResolver reports a fixed list once.
type staticResolver struct {
	members []Member
	pub     publisher
}

func newStatic(cfg StaticConfig) *staticResolver {
	members := make([]Member, len(cfg.Endpoints))
	for i, endpoint := range cfg.Endpoints {
		members[i] = Member{ID: endpoint, Endpoint: endpoint}
	}
	return &staticResolver{members: members}
}

func (r *staticResolver) Start(_ context.Context, update func([]Member)) error {
	r.pub.update = update
	r.pub.publish(r.members)
	return nil
}

func (r *staticResolver) Shutdown(context.Context) error {
	r.pub.close()
	return nil
}
