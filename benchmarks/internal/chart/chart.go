// SPDX-License-Identifier: Apache-2.0

// Package chart draws the benchmarks' line charts as images, with nothing but
// the standard library: a log-scale x axis of swept values, a y axis that is
// linear from zero unless the values span more than a factor of 20, one
// coloured line per series, optional min–max bars, and a legend. The tools
// in benchmarks (benchchart, e2echart) share it so that every chart of the
// project looks and reads the same.
package chart

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"sort"
)

// A Point is one measured value. Lo and Hi, when both are positive and
// differ, are its range (over rounds, say), drawn as a bar with caps.
type Point struct {
	X, Y   float64
	Lo, Hi float64
}

// A Series is one line of a chart.
type Series struct {
	Label  string
	Points []Point
}

// A Chart draws y against a swept x (log scale). y is on a log scale when
// the values span more than a factor of 20, else linear from zero, so that
// a flat line means a cost proportional to the unit on the y axis.
type Chart struct {
	Title, XLabel, YLabel string
	Series                []Series
	// XTick labels an x value; SizeLabel when nil.
	XTick func(x float64) string
	// Dodge shifts series i by (i - (n-1)/2) * Dodge pixels along x, so
	// that the range bars of series at the same x do not hide each other.
	Dodge int
}

// Palette holds the series colours, in order; series beyond it reuse it.
var Palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xd6, 0x27, 0x28, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
	{0xff, 0x7f, 0x0e, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff},
	{0xe3, 0x77, 0xc2, 0xff}, {0x17, 0xbe, 0xcf, 0xff}, {0x7f, 0x7f, 0x7f, 0xff},
	{0xbc, 0xbd, 0x22, 0xff},
}

// Black is the colour of the axes and the text.
var Black = color.RGBA{0, 0, 0, 0xff}

var grid = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}

// An axis maps data values to pixels between lo and hi (pixels).
type axis struct {
	log        bool
	min, max   float64 // data range (log10 of it when log)
	lo, hi     int
	ticks      []float64
	tickLabels []string
}

func (a axis) pos(v float64) int {
	if a.log {
		v = math.Log10(v)
	}
	if a.max == a.min {
		return (a.lo + a.hi) / 2
	}
	return a.lo + int(math.Round((v-a.min)/(a.max-a.min)*float64(a.hi-a.lo)))
}

// hasRange reports whether p carries a range to draw.
func (p Point) hasRange() bool { return p.Lo > 0 && p.Hi > 0 && p.Lo != p.Hi }

// Render draws the chart into a w x h image. Points with x or y not
// positive are left out.
func (c Chart) Render(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	left, right, top, bottom := 70, w-230, 40, h-45

	var xs, ys []float64
	for _, s := range c.Series {
		for _, p := range s.Points {
			if p.X > 0 && p.Y > 0 {
				xs = append(xs, p.X)
				ys = append(ys, p.Y)
				if p.hasRange() {
					ys = append(ys, p.Lo, p.Hi)
				}
			}
		}
	}
	drawText(img, left, 12, c.Title, 2, Black)
	if len(xs) == 0 {
		drawText(img, left, (top+bottom)/2, "no data", 2, Black)
		return img
	}
	tick := c.XTick
	if tick == nil {
		tick = SizeLabel
	}
	xa := xAxis(xs, left, right, tick)
	ya := yAxis(ys, bottom, top)

	for i, t := range xa.ticks {
		x := xa.pos(t)
		vline(img, x, top, bottom, grid)
		l := xa.tickLabels[i]
		drawText(img, x-textWidth(l, 1)/2, bottom+6, l, 1, Black)
	}
	for i, t := range ya.ticks {
		y := ya.pos(t)
		hline(img, left, right, y, grid)
		l := ya.tickLabels[i]
		drawText(img, left-6-textWidth(l, 1), y-3, l, 1, Black)
	}
	hline(img, left, right, bottom, Black)
	vline(img, left, top, bottom, Black)
	drawText(img, (left+right-textWidth(c.XLabel, 1))/2, bottom+22, c.XLabel, 1, Black)
	drawText(img, 4, top-12, c.YLabel, 1, Black)

	for i, s := range c.Series {
		col := Palette[i%len(Palette)]
		shift := int(math.Round((float64(i) - float64(len(c.Series)-1)/2) * float64(c.Dodge)))
		pts := append([]Point(nil), s.Points...)
		sort.Slice(pts, func(a, b int) bool { return pts[a].X < pts[b].X })
		var px, py int
		first := true
		for _, p := range pts {
			if p.X <= 0 || p.Y <= 0 {
				continue
			}
			x, y := xa.pos(p.X)+shift, ya.pos(p.Y)
			if !first {
				line(img, px, py, x, y, col)
			}
			if p.hasRange() {
				lo, hi := ya.pos(p.Lo), ya.pos(p.Hi)
				vline(img, x, min(lo, hi), max(lo, hi), col)
				hline(img, x-3, x+3, lo, col)
				hline(img, x-3, x+3, hi, col)
			}
			fill(img, x-2, y-2, x+3, y+3, col)
			px, py, first = x, y, false
		}
		ly := top + 4 + i*14
		fill(img, right+12, ly, right+26, ly+7, col)
		drawText(img, right+32, ly, s.Label, 1, Black)
	}
	return img
}

func xAxis(xs []float64, lo, hi int, tick func(float64) string) axis {
	mn, mx := minMax(xs)
	a := axis{log: true, min: math.Log10(mn), max: math.Log10(mx), lo: lo + 15, hi: hi - 15}
	seen := map[float64]bool{}
	sorted := append([]float64(nil), xs...)
	sort.Float64s(sorted)
	for _, x := range sorted {
		if !seen[x] {
			seen[x] = true
			a.ticks = append(a.ticks, x)
			a.tickLabels = append(a.tickLabels, tick(x))
		}
	}
	return a
}

func yAxis(ys []float64, lo, hi int) axis {
	mn, mx := minMax(ys)
	if mx/mn > 20 {
		a := axis{log: true, min: math.Floor(math.Log10(mn)), max: math.Ceil(math.Log10(mx)), lo: lo, hi: hi}
		if a.max == a.min {
			a.max++
		}
		for e := a.min; e <= a.max; e++ {
			for _, m := range []float64{1, 2, 5} {
				v := m * math.Pow(10, e)
				if (m == 1 || a.max-a.min <= 3) && math.Log10(v) <= a.max {
					a.ticks = append(a.ticks, v)
					a.tickLabels = append(a.tickLabels, NumLabel(v))
				}
			}
		}
		return a
	}
	step := niceStep(mx * 1.1 / 5)
	a := axis{min: 0, max: math.Ceil(mx*1.1/step) * step, lo: lo, hi: hi}
	for v := 0.0; v <= a.max+step/2; v += step {
		a.ticks = append(a.ticks, v)
		a.tickLabels = append(a.tickLabels, NumLabel(v))
	}
	return a
}

func minMax(vs []float64) (mn, mx float64) {
	mn, mx = vs[0], vs[0]
	for _, v := range vs {
		mn, mx = min(mn, v), max(mx, v)
	}
	return mn, mx
}

// niceStep rounds s up to 1, 2 or 5 times a power of ten.
func niceStep(s float64) float64 {
	if s <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(s)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= s {
			return m * p
		}
	}
	return 10 * p
}

// SizeLabel writes binary multiples as K and M (4096 -> 4K), others plainly.
func SizeLabel(v float64) string {
	n := int64(v)
	switch {
	case float64(n) != v:
		return NumLabel(v)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dK", n>>10)
	}
	return fmt.Sprintf("%d", n)
}

// NumLabel writes a value shortly: 10K for 10,000 and up, 1.5M for millions.
func NumLabel(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%gK", v/1e3)
	}
	return fmt.Sprintf("%g", v)
}

func fill(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	draw.Draw(img, image.Rect(x0, y0, x1, y1), image.NewUniform(c), image.Point{}, draw.Src)
}

func hline(img *image.RGBA, x0, x1, y int, c color.Color) { fill(img, x0, y, x1+1, y+1, c) }
func vline(img *image.RGBA, x, y0, y1 int, c color.Color) { fill(img, x, y0, x+1, y1+1, c) }

// line draws a two-pixel-wide segment.
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := x1-x0, y1-y0
	steps := max(abs(dx), abs(dy), 1)
	for i := 0; i <= steps; i++ {
		x := x0 + int(math.Round(float64(dx*i)/float64(steps)))
		y := y0 + int(math.Round(float64(dy*i)/float64(steps)))
		fill(img, x, y, x+2, y+2, c)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
