package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/store"
)

// withCheckDigits completes the first digits of a CPF (9) or CNPJ (12).
func withCheckDigits(base string) string {
	if len(base) == 9 {
		return base + cpfDigits(base)
	}
	return base + cnpjDigits(base)
}

// SeedDemo fills st with the Billing records of the demo organization: its
// issuer profile, six customers, subscriptions (active and cancelled),
// invoices that are open, paid, overdue, cancelled and refunded, invoices
// without NF-e, and NF-e authorized, rejected, pending and cancelled. now
// anchors every date. It seeds once: when the organization already has a
// billing profile it changes nothing. The organization, its people and tokens are package demo's (inboxdemo.Load creates them).
func SeedDemo(ctx context.Context, st Store, now time.Time) error {
	r := newRepos(st)
	if _, err := r.orgs.Get(ctx, demo.Organization, demo.Organization); err == nil {
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("seeding billing demo: %w", err)
	}
	s := &demoSeeder{ctx: ctx, r: r, counters: st, now: now.UTC().Truncate(time.Second)}
	s.seed()
	if s.err != nil {
		return fmt.Errorf("seeding billing demo: %w", s.err)
	}
	return nil
}

type demoSeeder struct {
	ctx       context.Context
	r         repos
	counters  store.Counters
	now       time.Time
	err       error
	org       Organization
	customers map[string]Customer
	invoices  map[string]*Invoice
	nfeNumber int
}

// put stores one record of the demo with its repository's put.
func put[T any](s *demoSeeder, r store.Repo[T], v T) {
	if s.err == nil {
		s.err = r.Put(s.ctx, demo.Organization, v)
	}
}

// at is a moment days from now (negative: in the past), at a given hour of
// Brasília.
func (s *demoSeeder) at(days, hour int) time.Time {
	d := s.now.In(brt).AddDate(0, 0, days)
	return time.Date(d.Year(), d.Month(), d.Day(), hour, 0, 0, 0, brt).UTC()
}

func (s *demoSeeder) day(days int) string { return s.at(days, 12).In(brt).Format(dateLayout) }

func (s *demoSeeder) seed() {
	created := s.at(-120, 9)
	s.org = Organization{ID: demo.Organization, Name: "Demo Comércio", LegalName: "Demo Comércio de Software Ltda", CNPJ: withCheckDigits("112223330001"),
		StateReg: "110042490114", Email: "financeiro@demo.kobana.dev", Currency: Currency, NFeSeries: 1, CreatedAt: created,
		Address: Address{Street: "Avenida Paulista", Number: "1000", Complement: "conj. 81", Neighborhood: "Bela Vista", City: "São Paulo", CityCode: "3550308", State: "SP", ZIP: "01310100"}}
	put(s, s.r.orgs, s.org)

	s.customers = map[string]Customer{}
	customer := func(id, name, email, doc string, addr Address, days int) {
		c := Customer{ID: id, Name: name, Email: email, Document: doc, Address: addr, CreatedAt: s.at(days, 10), UpdatedAt: s.at(days, 10)}
		switch len(doc) {
		case 11:
			c.DocumentType = "cpf"
		case 14:
			c.DocumentType = "cnpj"
		}
		s.customers[id] = c
		put(s, s.r.customers, c)
	}
	customer("cus_acme", "ACME Industrial Ltda", "financeiro@acme.example", withCheckDigits("457812360001"),
		Address{Street: "Rua Funchal", Number: "418", Neighborhood: "Vila Olímpia", City: "São Paulo", CityCode: "3550308", State: "SP", ZIP: "04551060"}, -110)
	// Globex's CNPJ was imported with a typo in its check digits: SEFAZ rejects its NF-e.
	globexDoc := withCheckDigits("334455660001")
	globexDoc = globexDoc[:12] + fmt.Sprint((int(globexDoc[12]-'0')+1)%10) + globexDoc[13:]
	customer("cus_globex", "Globex Serviços S.A.", "contas@globex.example", globexDoc,
		Address{Street: "Avenida Rio Branco", Number: "156", Neighborhood: "Centro", City: "Rio de Janeiro", CityCode: "3304557", State: "RJ", ZIP: "20040003"}, -100)
	// Initech's address lacks the number and the CEP: its NF-e is rejected too.
	customer("cus_initech", "Initech Software Ltda", "billing@initech.example", withCheckDigits("998877660001"),
		Address{Street: "Avenida Afonso Pena", Neighborhood: "Centro", City: "Belo Horizonte", CityCode: "3106200", State: "MG"}, -95)
	customer("cus_maria", "Maria Oliveira", "maria.oliveira@example.com", withCheckDigits("123456789"),
		Address{Street: "Rua das Laranjeiras", Number: "55", Complement: "apto 302", Neighborhood: "Laranjeiras", City: "Rio de Janeiro", CityCode: "3304557", State: "RJ", ZIP: "22240003"}, -80)
	// João has no e-mail: a reminder cannot reach him.
	customer("cus_joao", "João Pereira", "", withCheckDigits("987654321"),
		Address{Street: "Rua XV de Novembro", Number: "1200", Neighborhood: "Centro", City: "Curitiba", CityCode: "4106902", State: "PR", ZIP: "80060000"}, -60)
	customer("cus_umbrella", "Umbrella Comércio Ltda", "financeiro@umbrella.example", withCheckDigits("776655440001"),
		Address{Street: "Rua da Praia", Number: "300", Neighborhood: "Centro Histórico", City: "Porto Alegre", CityCode: "4314902", State: "RS", ZIP: "90010000"}, -105)

	sub := func(id, cus, desc string, cents int64, startDays int, cancelDays int, reason string) {
		start := s.at(startDays, 9)
		sb := Subscription{ID: id, CustomerID: cus, Description: desc, AmountCents: cents, Currency: Currency, Interval: "monthly", Status: SubscriptionActive,
			StartDate: start.In(brt).Format(dateLayout), CreatedAt: start, UpdatedAt: start}
		if cancelDays != 0 {
			sb.Status, sb.CancelledAt, sb.CancelReason, sb.UpdatedAt = SubscriptionCancelled, s.at(cancelDays, 15), reason, s.at(cancelDays, 15)
		} else {
			sb.NextBillingDate = nextBilling(start.In(brt), "monthly", s.day(0))
		}
		put(s, s.r.subscriptions, sb)
	}
	sub("sub_acme", "cus_acme", "Kobana Business", 149000, -105, 0, "")
	sub("sub_maria", "cus_maria", "Plano Pessoal", 4990, -70, 0, "")
	sub("sub_umbrella", "cus_umbrella", "Kobana Business", 149000, -104, -40, "cliente encerrou as operações")

	s.invoices = map[string]*Invoice{}
	type plan struct {
		num        int
		cus, sub   string
		desc       string
		items      []InvoiceItem
		issue, due int
		status     string
		paid       int
		method     string
	}
	one := func(desc string, cents int64) []InvoiceItem {
		return []InvoiceItem{{Description: desc, Quantity: 1, UnitPriceCents: cents}}
	}
	for _, pl := range []plan{
		{1001, "cus_acme", "sub_acme", "Kobana Business — setembro", one("Kobana Business — setembro", 149000), -75, -65, InvoicePaid, -66, "boleto"},
		{1002, "cus_acme", "sub_acme", "Kobana Business — outubro", one("Kobana Business — outubro", 149000), -45, -35, InvoicePaid, -36, "pix"},
		{1003, "cus_acme", "sub_acme", "Kobana Business — novembro", one("Kobana Business — novembro", 149000), -15, -5, InvoiceOpen, 0, ""},
		{1004, "cus_acme", "", "Implantação e treinamento", []InvoiceItem{{Description: "Implantação", Quantity: 1, UnitPriceCents: 350000},
			{Description: "Treinamento da equipe (turma)", Quantity: 2, UnitPriceCents: 75000}}, -1, 14, InvoiceOpen, 0, ""},
		{1005, "cus_globex", "", "Consultoria de integração — outubro", one("Consultoria de integração (40 h)", 870000), -50, -40, InvoiceOpen, 0, ""},
		{1006, "cus_globex", "", "Suporte premium — novembro", one("Suporte premium — novembro", 120000), -20, -10, InvoiceOpen, 0, ""},
		{1007, "cus_globex", "", "Suporte premium — setembro", one("Suporte premium — setembro", 120000), -80, -70, InvoicePaid, -60, "boleto"},
		{1008, "cus_initech", "", "Licença anual", one("Licença anual Kobana Enterprise", 1290000), -30, -20, InvoicePaid, -21, "credit_card"},
		{1009, "cus_maria", "sub_maria", "Plano Pessoal — novembro", one("Plano Pessoal — novembro", 4990), -10, 5, InvoiceOpen, 0, ""},
		{1010, "cus_maria", "sub_maria", "Plano Pessoal — outubro", one("Plano Pessoal — outubro", 4990), -40, -25, InvoicePaid, -26, "pix"},
		{1011, "cus_joao", "", "Consultoria avulsa", []InvoiceItem{{Description: "Consultoria (hora)", Quantity: 2, UnitPriceCents: 17500}}, -25, -12, InvoiceOpen, 0, ""},
		{1012, "cus_umbrella", "sub_umbrella", "Kobana Business — outubro", one("Kobana Business — outubro", 149000), -45, -35, InvoiceCancelled, 0, ""},
		{1013, "cus_umbrella", "sub_umbrella", "Kobana Business — setembro", one("Kobana Business — setembro", 149000), -75, -65, InvoiceRefunded, -66, "boleto"},
		{1014, "cus_acme", "", "Horas adicionais de suporte", []InvoiceItem{{Description: "Hora de suporte adicional", Quantity: 3, UnitPriceCents: 18000}}, -3, 27, InvoiceOpen, 0, ""},
	} {
		var total int64
		for i := range pl.items {
			pl.items[i].AmountCents = pl.items[i].Quantity * pl.items[i].UnitPriceCents
			total += pl.items[i].AmountCents
		}
		c := s.customers[pl.cus]
		at := s.at(pl.issue, 8)
		inv := &Invoice{ID: fmt.Sprintf("inv_%04d", pl.num), Number: fmt.Sprintf("FAT-%06d", pl.num), CustomerID: c.ID, CustomerName: c.Name,
			SubscriptionID: pl.sub, Description: pl.desc, Items: pl.items, AmountCents: total, Currency: Currency,
			IssueDate: s.day(pl.issue), DueDate: s.day(pl.due), Status: pl.status, CreatedAt: at, UpdatedAt: at}
		if pl.paid != 0 {
			inv.PaidAt, inv.PaidAmountCents, inv.PaymentMethod, inv.UpdatedAt = s.at(pl.paid, 14), total, pl.method, s.at(pl.paid, 14)
		}
		switch pl.status {
		case InvoiceCancelled:
			inv.CancelledAt, inv.CancelReason, inv.UpdatedAt = s.at(-40, 15), "assinatura cancelada pelo cliente", s.at(-40, 15)
		case InvoiceRefunded:
			inv.RefundedAt, inv.RefundReason, inv.UpdatedAt = s.at(-38, 11), "cobrança em duplicidade", s.at(-38, 11)
		}
		s.invoices[inv.ID] = inv
	}
	// Reminders already sent.
	s.reminder("inv_1005", -10)
	s.reminder("inv_1005", -3)
	s.reminder("inv_1003", -2)

	// NF-e: authorized, rejected, re-issued after a cancellation, pending.
	s.nfe("inv_1001", -75, NFeAuthorized, nil, 0)
	s.nfe("inv_1002", -45, NFeAuthorized, nil, 0)
	s.nfe("inv_1003", -15, NFeAuthorized, nil, 0)
	s.nfe("inv_1005", -50, NFeRejected, &Rejection{Code: "208", Message: "Rejeição: CNPJ do destinatário inválido"}, 0)
	s.nfe("inv_1007", -60, NFeRejected, &Rejection{Code: "208", Message: "Rejeição: CNPJ do destinatário inválido"}, 0)
	s.nfe("inv_1008", -21, NFeRejected, sefaz(s.customers["cus_initech"]), 0)
	s.nfe("inv_1010", -40, NFeCancelled, nil, 3*time.Hour)
	s.nfe("inv_1010", -39, NFeAuthorized, nil, 0)
	s.nfe("inv_1014", 0, NFePending, nil, 0)
	// The most recent: authorized two hours ago, still cancellable.
	s.nfeAt("inv_1004", s.now.Add(-2*time.Hour), NFeAuthorized, nil, 0)

	for _, inv := range s.invoices {
		put(s, s.r.invoices, *inv)
	}
	// The counters continue after the seeded documents.
	s.number("invoice", 1014)
	s.number("nfe_series_1", int64(s.nfeNumber))
}

// number makes last the last number handed out by a counter that has not
// been used yet.
func (s *demoSeeder) number(name string, last int64) {
	if s.err == nil {
		_, s.err = s.counters.NextNumber(s.ctx, demo.Organization, name, last)
	}
}

func (s *demoSeeder) reminder(invID string, days int) {
	inv := s.invoices[invID]
	c := s.customers[inv.CustomerID]
	at := s.at(days, 10)
	r := Reminder{ID: fmt.Sprintf("rem_%s_%d", invID[4:], inv.RemindersSent+1), InvoiceID: invID, CustomerID: c.ID, To: c.Email,
		Subject: fmt.Sprintf("Lembrete de pagamento: fatura %s (%s)", inv.Number, formatBRL(inv.AmountCents)),
		Body:    fmt.Sprintf("Olá, %s,\n\nA fatura %s, no valor de %s, venceu em %s.\n", c.Name, inv.Number, formatBRL(inv.AmountCents), brDate(inv.DueDate)),
		SentBy:  "person:" + demo.Owner, CreatedAt: at}
	put(s, s.r.reminders, r)
	inv.RemindersSent++
	inv.LastReminderAt = at
}

func (s *demoSeeder) nfe(invID string, days int, status string, rej *Rejection, cancelAfter time.Duration) {
	s.nfeAt(invID, s.at(days, 9).Add(30*time.Minute), status, rej, cancelAfter)
}

func (s *demoSeeder) nfeAt(invID string, at time.Time, status string, rej *Rejection, cancelAfter time.Duration) {
	if s.err != nil {
		return
	}
	inv := s.invoices[invID]
	c := s.customers[inv.CustomerID]
	s.nfeNumber++
	n := NFe{ID: fmt.Sprintf("nfe_%04d", s.nfeNumber), InvoiceID: invID, CustomerID: c.ID, Number: s.nfeNumber, Series: s.org.NFeSeries,
		Status: status, Rejection: rej, AmountCents: inv.AmountCents, Issuer: issuerParty(s.org), Recipient: recipientParty(c),
		IssuedAt: at, CreatedAt: at, UpdatedAt: at}
	n.AccessKey, s.err = AccessKey(s.org.Address.State, at.In(brt), s.org.CNPJ, n.Series, n.Number, 10_000_000+s.nfeNumber*7919)
	if status == NFeAuthorized || status == NFeCancelled {
		n.AuthorizedAt = at.Add(2 * time.Second)
		n.Protocol = protocolNumber(s.org.Address.State, at, n.Number)
	}
	if status == NFeCancelled {
		n.CancelledAt, n.UpdatedAt = at.Add(cancelAfter), at.Add(cancelAfter)
		n.CancelReason = "valor da fatura emitido com erro, nota substituída"
		n.CancelProtocol = protocolNumber(s.org.Address.State, n.CancelledAt, n.Number+500000)
	}
	put(s, s.r.nfes, n)
	inv.NFeID, inv.NFeStatus = n.ID, n.Status
}
