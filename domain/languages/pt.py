"""Portuguese: what the service knows of it (see ``domain.languages.base``).

The assistant does not speak it: a reply to a message in it is in English.
"""

from __future__ import annotations

from domain.languages.base import Language, optional_words

# Words that may open an announcement ("First, let's talk about...").
_OPENERS = optional_words(r"primeiro|depois|agora|finalmente|por\s+fim|para\s+terminar")

LANGUAGE = Language(
    code="pt",
    markers=frozenset({
        "o", "os", "meu", "meus", "minha", "minhas", "mostre", "mostrar", "exporte", "traduza",
        "analise", "cancele", "obrigado", "obrigada", "ola", "da", "dos", "das", "em", "com", "nao",
        "quantos", "quantas", "qual", "quais", "depois", "tambem", "artigo", "artigos", "trabalhos", "tarefas",
        "saldo", "alertas", "ultimos", "ultimas", "capitulos", "sou", "quem", "por", "favor",
    }),
    letters="ãõ",
    name="Portuguese",
    locale="pt_PT",
    stemmer="portuguese",
    called=r"portuguese|portugais",
    spoken_fillers=(
        "é né tipo então pronto bem bom okay ok ah eh hum digamos realmente olá bem-vindos obrigado obrigada "
        "tchau"
    ),
    leading_fillers="é então e bom bem ok okay sim mas",
    leading_words="então bom bem e mas ok",
    cue_phrases=(
        r"agora|a\s+seguir|em\s+seguida|passemos|vamos\s+(?:falar|passar|ver|agora)|falemos|primeiro|segundo|"
        r"terceiro|em\s+primeiro\s+lugar|finalmente|por\s+fim|para\s+(?:concluir|terminar|começar)|"
        r"em\s+conclusão|outro\s+(?:ponto|tema|assunto|exemplo)|(?:o|a)\s+próxim[oa]|o\s+que\s+é|como|por\s+que"
    ),
    announce_phrases=(
        _OPENERS + r"(?:vamos\s+falar|falemos)\s+(?:agora\s+)?(?:sobre\s+(?:o|a|os|as)|do|da|dos|das|de)|"
        + _OPENERS + r"passemos\s+(?:agora\s+)?(?:aos|às|ao|à)"
    ),
    instruction_phrases=(
        r"(?:(?:primeiro|depois|então|agora|finalmente)[,\s]+)?"
        r"(?:clique|abra|instale|baixe|execute|digite|selecione|pressione|insira|apague|cole|salve|conecte|"
        r"despeje|misture|vá\s+para|verifique|meça|certifique-se|não\s+se\s+esqueça|comece\s+por)\b|"
        r".*?\b(?:passo\s+(?:\d+|um|dois|três|quatro|cinco)|(?:o\s+)?(?:primeiro|próximo|último)\s+passo)\b"
    ),
    step_openers=r"primeiro|para\s+começar|comece|em\s+primeiro\s+lugar",
    video_subject_phrases=(
        r"\b(?:este|esta)\s+(?:(?:breve|pequeno|pequena)\s+)?(?:vídeo|video|episódio|aula|podcast|apresentação|"
        r"guia|introdução)\s+(?:sobre|acerca\s+de)\s+(?:o\s+|a\s+|os\s+|as\s+)?"
    ),
    conclusion_phrases=r"em\s+conclusão|para\s+concluir|em\s+resumo|para\s+terminar|resumindo",
    sponsor_phrases=r"\bpatrocina(?:dor|do|da)\b|\bcódigo\s+(?:promocional|de\s+desconto)\b",
    question_openers=("por que", "porque é que"),
    conjunction="e",
    scales={"mil": 3, "milhão": 6, "milhões": 6, "bilhão": 9, "bilhões": 9},
    indefinite="um uma uns umas",
    vague_heads="espécie forma maneira monte pouco parte metade",
    connectors="de do da dos das e em para com",
    pronouns=(
        "eu me mim tu te ti ele ela nós nos vós vos eles elas lhe lhes isto isso aquilo este esta esse essa meu "
        "minha teu tua seu sua nosso nossa algo nada alguém lo la los las"
    ),
    article_pronouns="o a os as",
    dangling="e ou mas o a os as um uma de do da a ao em para com por",
    verb_signals="eu tu ele ela nós eles elas se me te lhe não para",
    determiners=(
        "o a os as um uma uns umas do da dos das no na nos nas ao aos à às pelo pela pelos pelas este esta "
        "estes estas esse essa esses essas aquele aquela meu minha meus minhas teu tua seu sua seus suas nosso "
        "nossa nossos nossas cada vários várias alguns algumas todo toda todos todas"
    ),
    noun_rule=0,
    verb_endings=("amos", "emos", "imos"),
    contractions="do da dos das no na nos nas ao aos à às pelo pela pelos pelas",
    plural_endings=("s", "es"),
    definite={"do": "o", "da": "a", "dos": "os", "das": "as", "no": "o", "na": "a", "nos": "os", "nas": "as",
    "ao": "o", "aos": "os", "à": "a", "às": "as", "pelo": "o", "pela": "a", "pelos": "os", "pelas": "as"},
    definite_articles=("o", "a", "os", "as"),
    plural_articles={"os", "as"},
    plural_templates={"what": "o que são {t}", "how": "como funcionam {t}", "why": "porque {t} importam"},
    org_tail=(
        "al|ais|ana|anas|ano|anos|ica|icas|ico|icos|ense|enses|eira|eiras|eiro|eiros|eia|eias|eu|eus",
        r"da\s+|do\s+|das\s+|dos\s+|de\s+",
        r"que|o|a|os|as|um|uma",
    ),
    labels={
        "introduction": "Introdução", "key_facts": "Pontos-chave", "faq": "Perguntas frequentes",
        "conclusion": "Conclusão", "step": "Passo", "in_short": "Em resumo", "analysis": "Análise",
        "figures": "Números e factos", "timeline": "Cronologia", "and": "e", "what": "o que é {t}",
        "how": "como funciona {t}", "why": "porque {t} importa", "how_to": "como {t}", "who": "quem é {t}",
        "hook": "gancho", "context": "contexto", "development": "desenvolvimento", "conclusion_part": "conclusão",
        "chapters": "Capítulos", "source": "Fonte", "watch": "Ver em", "question": "P", "answer": "R",
        "also_answered": "Outras perguntas respondidas", "main_entities": "Entidades principais",
    },
    colon=": ",
    question_mark="?",
)
