package shop

import (
	"fmt"
	"strconv"
	"strings"
)

// Button lines of the pages.
const (
	btnSearch       = "[button] Search [button_]\n"
	btnBackToSearch = "[button] Back to Search [button_]\n"
	btnPrev         = "[button] < Prev [button_]\n"
	btnNext         = "[button] Next > [button_]\n"
	btnItemTabs     = "[button] Description [button_] [button] Features [button_] [button] Reviews [button_]\n"
	btnBuy          = "[button] Buy Now [button_]\n"
)

// render sets pageText and the admissible actions for the current state.
func (x *Episode) render() {
	x.buf = x.buf[:0]
	x.acts, x.moves = x.acts[:0], x.moves[:0]
	switch x.page {
	case pageSearch:
		x.renderSearch()
	case pageResults:
		x.renderResults()
	case pageItem:
		x.renderItem()
	case pageDescription, pageFeatures, pageReviews:
		x.renderSubpage()
	case pageDone:
		x.renderDone()
	}
	x.pageText = string(x.buf)
}

// write appends text to the page being rendered.
func (x *Episode) write(parts ...string) {
	for _, p := range parts {
		x.buf = append(x.buf, p...)
	}
}

// add appends an admissible action and its move.
func (x *Episode) add(action string, m move) {
	x.acts = append(x.acts, action)
	x.moves = append(x.moves, m)
}

func (x *Episode) renderSearch() {
	x.write(btnSearch)
	for i, a := range x.goal.searchActions {
		x.add(a, move{kind: moveSearch, arg: i})
	}
}

func (x *Episode) renderResults() {
	res := x.goal.results[x.query]
	lo := x.resultPage * PageSize
	hi := min(lo+PageSize, len(res))
	x.write(btnBackToSearch)
	x.add(actBackToSearch, move{kind: moveBackToSearch})
	x.write("Page ")
	x.buf = strconv.AppendInt(x.buf, int64(x.resultPage+1), 10)
	x.write(" (Total results: ")
	x.buf = strconv.AppendInt(x.buf, int64(len(res)), 10)
	x.write(")\n")
	if x.resultPage > 0 {
		x.write(btnPrev)
		x.add(actPrev, move{kind: movePrev})
	}
	if hi < len(res) {
		x.write(btnNext)
		x.add(actNext, move{kind: moveNext})
	}
	prods := x.env.world.cat.products
	for _, d := range res[lo:hi] {
		p := &prods[d]
		x.write(p.resultBlock)
		x.add(p.clickAction, move{kind: moveItem, arg: int(d)})
	}
}

func (x *Episode) renderItem() {
	p := &x.env.world.cat.products[x.item]
	x.write(btnBackToSearch)
	x.write(btnPrev)
	x.add(actBackToSearch, move{kind: moveBackToSearch})
	x.add(actPrev, move{kind: movePrev})
	pt := &productTypes[p.ptype]
	for d, vals := range p.options {
		x.write(pt.Options[d].Name, ":")
		for i, v := range vals {
			if x.selected[d] == i {
				x.write(" [clicked button] ", v, " [clicked button_]")
			} else {
				x.write(" [button] ", v, " [button_]")
			}
			x.add(p.optionAction[d][i], move{kind: moveOption, arg: d, arg2: i})
		}
		x.write("\n")
	}
	x.write(p.itemHead)
	x.write(btnItemTabs)
	x.write(btnBuy)
	x.add(actDescription, move{kind: moveDescription})
	x.add(actFeatures, move{kind: moveFeatures})
	x.add(actReviews, move{kind: moveReviews})
	x.add(actBuy, move{kind: moveBuy})
}

func (x *Episode) renderSubpage() {
	p := &x.env.world.cat.products[x.item]
	x.write(btnBackToSearch)
	x.write(btnPrev)
	x.add(actBackToSearch, move{kind: moveBackToSearch})
	x.add(actPrev, move{kind: movePrev})
	switch x.page {
	case pageDescription:
		x.write(p.description, "\n")
	case pageFeatures:
		for _, f := range p.features {
			x.write("- ", f, "\n")
		}
	case pageReviews:
		for _, r := range p.reviews {
			x.buf = strconv.AppendInt(x.buf, int64(r.stars), 10)
			x.write("/5: ", r.text, "\n")
		}
	}
}

func (x *Episode) renderDone() {
	p := &x.env.world.cat.products[x.item]
	pt := &productTypes[p.ptype]
	var opts []string
	for d, i := range x.selected {
		if i >= 0 {
			opts = append(opts, pt.Options[d].Name+": "+p.options[d][i])
		}
	}
	if len(opts) == 0 {
		opts = append(opts, "none")
	}
	x.buf = fmt.Appendf(x.buf, "Thank you for shopping with us!\nPurchased: %s %s\nOptions: %s\nPrice: $%.2f\nYour score (min 0.0, max 1.0): %.2f\n",
		p.id, p.title, strings.Join(opts, ", "), p.price, x.breakdown.Total)
}
