// SPDX-License-Identifier: Apache-2.0

package transport

// fifo is a queue of held frames. Popped slots are cleared so that settled
// frames' bytes are not kept reachable by the backing array.
type fifo struct {
	items []*entry
	head  int
}

func (q *fifo) len() int { return len(q.items) - q.head }

func (q *fifo) push(e *entry) {
	if q.head > 0 && q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	q.items = append(q.items, e)
}

func (q *fifo) front() *entry { return q.items[q.head] }

func (q *fifo) pop() *entry {
	e := q.items[q.head]
	q.items[q.head] = nil
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head > 1024 && q.head*2 > len(q.items) {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return e
}

// drain removes and returns every entry in order.
func (q *fifo) drain() []*entry {
	out := append([]*entry(nil), q.items[q.head:]...)
	clear(q.items)
	q.items, q.head = q.items[:0], 0
	return out
}

// reset replaces the content with entries.
func (q *fifo) reset(entries []*entry) {
	clear(q.items)
	q.items, q.head = entries, 0
}
