package billing

import (
	"encoding/xml"
	"fmt"
	"strconv"
)

// NFeNamespace is the namespace of NF-e documents.
const NFeNamespace = "http://www.portalfiscal.inf.br/nfe"

// The types below are the subset of the NF-e 4.00 layout (nfeProc) this
// product fills. Field names follow the layout's tags.

type nfeProcXML struct {
	XMLName xml.Name   `xml:"http://www.portalfiscal.inf.br/nfe nfeProc"`
	Versao  string     `xml:"versao,attr"`
	NFe     nfeXML     `xml:"NFe"`
	ProtNFe protNFeXML `xml:"protNFe"`
}

type nfeXML struct {
	InfNFe infNFeXML `xml:"infNFe"`
}

type infNFeXML struct {
	ID     string     `xml:"Id,attr"`
	Versao string     `xml:"versao,attr"`
	Ide    ideXML     `xml:"ide"`
	Emit   emitXML    `xml:"emit"`
	Dest   destXML    `xml:"dest"`
	Det    []detXML   `xml:"det"`
	Total  totalXML   `xml:"total"`
	Transp transpXML  `xml:"transp"`
	Pag    pagXML     `xml:"pag"`
	InfAd  infAdicXML `xml:"infAdic"`
}

type ideXML struct {
	CUF      int    `xml:"cUF"`
	CNF      string `xml:"cNF"`
	NatOp    string `xml:"natOp"`
	Mod      int    `xml:"mod"`
	Serie    int    `xml:"serie"`
	NNF      int    `xml:"nNF"`
	DhEmi    string `xml:"dhEmi"`
	TpNF     int    `xml:"tpNF"`
	IDDest   int    `xml:"idDest"`
	CMunFG   string `xml:"cMunFG"`
	TpImp    int    `xml:"tpImp"`
	TpEmis   int    `xml:"tpEmis"`
	CDV      string `xml:"cDV"`
	TpAmb    int    `xml:"tpAmb"`
	FinNFe   int    `xml:"finNFe"`
	IndFinal int    `xml:"indFinal"`
	IndPres  int    `xml:"indPres"`
	ProcEmi  int    `xml:"procEmi"`
	VerProc  string `xml:"verProc"`
}

type enderXML struct {
	XLgr    string `xml:"xLgr"`
	Nro     string `xml:"nro"`
	XCpl    string `xml:"xCpl,omitempty"`
	XBairro string `xml:"xBairro"`
	CMun    string `xml:"cMun"`
	XMun    string `xml:"xMun"`
	UF      string `xml:"UF"`
	CEP     string `xml:"CEP"`
	CPais   string `xml:"cPais"`
	XPais   string `xml:"xPais"`
}

type emitXML struct {
	CNPJ      string   `xml:"CNPJ"`
	XNome     string   `xml:"xNome"`
	EnderEmit enderXML `xml:"enderEmit"`
	IE        string   `xml:"IE"`
	CRT       int      `xml:"CRT"`
}

type destXML struct {
	CNPJ      string   `xml:"CNPJ,omitempty"`
	CPF       string   `xml:"CPF,omitempty"`
	XNome     string   `xml:"xNome"`
	EnderDest enderXML `xml:"enderDest"`
	IndIEDest int      `xml:"indIEDest"`
	Email     string   `xml:"email,omitempty"`
}

type detXML struct {
	NItem   int        `xml:"nItem,attr"`
	Prod    prodXML    `xml:"prod"`
	Imposto impostoXML `xml:"imposto"`
}

type prodXML struct {
	CProd    string `xml:"cProd"`
	CEAN     string `xml:"cEAN"`
	XProd    string `xml:"xProd"`
	NCM      string `xml:"NCM"`
	CFOP     string `xml:"CFOP"`
	UCom     string `xml:"uCom"`
	QCom     string `xml:"qCom"`
	VUnCom   string `xml:"vUnCom"`
	VProd    string `xml:"vProd"`
	CEANTrib string `xml:"cEANTrib"`
	UTrib    string `xml:"uTrib"`
	QTrib    string `xml:"qTrib"`
	VUnTrib  string `xml:"vUnTrib"`
	IndTot   int    `xml:"indTot"`
}

type impostoXML struct {
	ICMS struct {
		SN102 struct {
			Orig  int    `xml:"orig"`
			CSOSN string `xml:"CSOSN"`
		} `xml:"ICMSSN102"`
	} `xml:"ICMS"`
	PIS struct {
		NT struct {
			CST string `xml:"CST"`
		} `xml:"PISNT"`
	} `xml:"PIS"`
	COFINS struct {
		NT struct {
			CST string `xml:"CST"`
		} `xml:"COFINSNT"`
	} `xml:"COFINS"`
}

type totalXML struct {
	ICMSTot struct {
		VBC        string `xml:"vBC"`
		VICMS      string `xml:"vICMS"`
		VICMSDeson string `xml:"vICMSDeson"`
		VFCP       string `xml:"vFCP"`
		VBCST      string `xml:"vBCST"`
		VST        string `xml:"vST"`
		VFCPST     string `xml:"vFCPST"`
		VFCPSTRet  string `xml:"vFCPSTRet"`
		VProd      string `xml:"vProd"`
		VFrete     string `xml:"vFrete"`
		VSeg       string `xml:"vSeg"`
		VDesc      string `xml:"vDesc"`
		VII        string `xml:"vII"`
		VIPI       string `xml:"vIPI"`
		VIPIDevol  string `xml:"vIPIDevol"`
		VPIS       string `xml:"vPIS"`
		VCOFINS    string `xml:"vCOFINS"`
		VOutro     string `xml:"vOutro"`
		VNF        string `xml:"vNF"`
	} `xml:"ICMSTot"`
}

type transpXML struct {
	ModFrete int `xml:"modFrete"`
}

type pagXML struct {
	DetPag struct {
		TPag string `xml:"tPag"`
		VPag string `xml:"vPag"`
	} `xml:"detPag"`
}

type infAdicXML struct {
	InfCpl string `xml:"infCpl"`
}

type protNFeXML struct {
	Versao  string `xml:"versao,attr"`
	InfProt struct {
		TpAmb    int    `xml:"tpAmb"`
		VerAplic string `xml:"verAplic"`
		ChNFe    string `xml:"chNFe"`
		DhRecbto string `xml:"dhRecbto"`
		NProt    string `xml:"nProt"`
		CStat    int    `xml:"cStat"`
		XMotivo  string `xml:"xMotivo"`
	} `xml:"infProt"`
}

func ender(a Address) enderXML {
	nro := a.Number
	if nro == "" {
		nro = "S/N"
	}
	return enderXML{XLgr: a.Street, Nro: nro, XCpl: a.Complement, XBairro: a.Neighborhood, CMun: a.CityCode, XMun: a.City, UF: a.State, CEP: a.ZIP,
		CPais: "1058", XPais: "Brasil"}
}

// homologationNote marks every document: NF-e are issued in SEFAZ's
// homologation environment (tpAmb 2) and have no fiscal value.
const homologationNote = "NF-E EMITIDA EM AMBIENTE DE HOMOLOGACAO - SEM VALOR FISCAL"

// xml renders the authorized NF-e as an nfeProc document.
func (d nfeDoc) xml() ([]byte, error) {
	n, inv := d.nfe, d.invoice
	key := n.AccessKey
	dh := n.IssuedAt.In(brt).Format("2006-01-02T15:04:05-07:00")
	inter := n.Issuer.Address.State != n.Recipient.Address.State
	cfop := "5933"
	idDest := 1
	if inter {
		cfop, idDest = "6933", 2
	}
	var doc nfeProcXML
	doc.Versao = "4.00"
	inf := &doc.NFe.InfNFe
	inf.ID, inf.Versao = "NFe"+key, "4.00"
	inf.Ide = ideXML{CUF: ufCodes[n.Issuer.Address.State], CNF: key[35:43], NatOp: "PRESTACAO DE SERVICOS", Mod: 55, Serie: n.Series, NNF: n.Number,
		DhEmi: dh, TpNF: 1, IDDest: idDest, CMunFG: n.Issuer.Address.CityCode, TpImp: 1, TpEmis: 1, CDV: key[43:], TpAmb: 2, FinNFe: 1,
		IndPres: 0, ProcEmi: 0, VerProc: "kobana-billing 1.0"}
	if n.Recipient.DocumentType == "cpf" {
		inf.Ide.IndFinal = 1
	}
	inf.Emit = emitXML{CNPJ: n.Issuer.Document, XNome: n.Issuer.Name, EnderEmit: ender(n.Issuer.Address), IE: n.Issuer.StateReg, CRT: 1}
	inf.Dest = destXML{XNome: n.Recipient.Name, EnderDest: ender(n.Recipient.Address), IndIEDest: 9, Email: n.Recipient.Email}
	if n.Recipient.DocumentType == "cpf" {
		inf.Dest.CPF = n.Recipient.Document
	} else {
		inf.Dest.CNPJ = n.Recipient.Document
	}
	var total int64
	for i, it := range inv.Items {
		var det detXML
		det.NItem = i + 1
		det.Prod = prodXML{CProd: fmt.Sprintf("SRV%03d", i+1), CEAN: "SEM GTIN", XProd: it.Description, NCM: "00000000", CFOP: cfop,
			UCom: "UN", QCom: strconv.FormatInt(it.Quantity, 10) + ".0000", VUnCom: decimal(it.UnitPriceCents), VProd: decimal(it.AmountCents),
			CEANTrib: "SEM GTIN", UTrib: "UN", QTrib: strconv.FormatInt(it.Quantity, 10) + ".0000", VUnTrib: decimal(it.UnitPriceCents), IndTot: 1}
		det.Imposto.ICMS.SN102.CSOSN = "102"
		det.Imposto.PIS.NT.CST = "07"
		det.Imposto.COFINS.NT.CST = "07"
		inf.Det = append(inf.Det, det)
		total += it.AmountCents
	}
	zero := decimal(0)
	t := &inf.Total.ICMSTot
	t.VBC, t.VICMS, t.VICMSDeson, t.VFCP, t.VBCST, t.VST, t.VFCPST, t.VFCPSTRet = zero, zero, zero, zero, zero, zero, zero, zero
	t.VFrete, t.VSeg, t.VDesc, t.VII, t.VIPI, t.VIPIDevol, t.VPIS, t.VCOFINS, t.VOutro = zero, zero, zero, zero, zero, zero, zero, zero, zero
	t.VProd, t.VNF = decimal(total), decimal(total)
	inf.Transp.ModFrete = 9
	inf.Pag.DetPag.TPag, inf.Pag.DetPag.VPag = "15", decimal(total)
	inf.InfAd.InfCpl = fmt.Sprintf("Fatura %s. %s.", inv.Number, homologationNote)
	doc.ProtNFe.Versao = "4.00"
	p := &doc.ProtNFe.InfProt
	p.TpAmb, p.VerAplic, p.ChNFe = 2, "SVRS-HOMOLOG-4.00", key
	p.DhRecbto = n.AuthorizedAt.In(brt).Format("2006-01-02T15:04:05-07:00")
	p.NProt, p.CStat, p.XMotivo = n.Protocol, 100, "Autorizado o uso da NF-e"
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the XML of NF-e %s: %w", n.ID, err)
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}
