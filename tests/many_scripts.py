"""One debate on school uniforms written in five scripts and languages for the tests (Chinese, Russian, Arabic,
English, Portuguese): a speech of six points, then three passages each rebutting one of them (its index), and a
two-round debate built from them."""

from __future__ import annotations

from debatrix.core.models import Debate

REBUTTALS = {  # a speech of six points, then three passages each rebutting one of them (its index)
 "zh": (["学校应该要求学生穿校服，因为校服可以减少学生之间的攀比。",
         "校服让学校更安全，陌生人很容易被认出来。",
         "统一的服装可以帮助家庭节省购买衣服的开支。",
         "穿校服能培养学生的集体荣誉感和归属感。",
         "早上不用挑选衣服，学生可以节省时间专心学习。",
         "许多成绩优秀的国家都实行校服制度。"],
        [("家庭开支", "对方说校服能节省家庭开支，但是一套校服价格很高，家庭还要另外购买日常衣服，开支反而增加了。", 2),
         ("攀比", "至于减少攀比，学生会用手机、鞋子和书包继续攀比，校服根本解决不了这个问题。", 0),
         ("成绩", "对方提到成绩优秀的国家实行校服制度，这只是相关而不是因果，芬兰没有校服成绩同样很好。", 5)]),
 "ru": (["Школьная форма уменьшает соперничество между учениками из-за дорогой одежды.",
         "Форма делает школу безопаснее: посторонних легко заметить.",
         "Единая одежда помогает семьям экономить деньги на покупках.",
         "Форма воспитывает у учеников чувство гордости за свою школу.",
         "Утром не нужно выбирать одежду, и ученики экономят время для учёбы.",
         "Во многих странах с высокими результатами обучения есть школьная форма."],
        [("деньги", "Оппоненты говорят, что семьи сэкономят, но комплект формы стоит дорого, а обычную одежду всё равно покупать, так что расходы семей только растут.", 2),
         ("соперничество", "Что касается соперничества, ученики будут соревноваться телефонами, обувью и рюкзаками; форма этого не отменит.", 0),
         ("страны", "Ссылка на страны с высокими результатами — это корреляция, а не причина: в Финляндии формы нет, а результаты высокие.", 5)]),
 "ar": (["الزي المدرسي يقلل التنافس بين الطلاب بسبب الملابس الغالية.",
         "الزي يجعل المدرسة أكثر أمانا لأن الغرباء يسهل التعرف عليهم.",
         "الملابس الموحدة تساعد الأسر على توفير المال.",
         "الزي يعزز شعور الطلاب بالانتماء والفخر بمدرستهم.",
         "لا يحتاج الطلاب إلى اختيار ملابسهم صباحا فيوفرون الوقت للدراسة.",
         "كثير من الدول ذات النتائج التعليمية العالية تفرض الزي المدرسي."],
        [("المال", "يقول الخصم إن الأسر توفر المال، لكن طقم الزي غالي الثمن والأسرة تشتري الملابس العادية أيضا، فتزيد النفقات.", 2),
         ("التنافس", "أما التنافس فسيستمر بالهواتف والأحذية والحقائب، ولن يوقفه الزي.", 0),
         ("الدول", "الإشارة إلى الدول ذات النتائج العالية ارتباط وليس سببا، ففنلندا بلا زي ونتائجها عالية.", 5)]),
    "en": (["School uniforms reduce rivalry between students over expensive clothes.",
            "Uniforms make schools safer because strangers are easy to spot.",
            "Uniform clothing helps families save money on purchases.",
            "Uniforms build students' pride in their school and a sense of belonging.",
            "Students need not choose clothes in the morning and save time for study.",
            "Many countries with high results in education have school uniforms."],
           [("money", "They say families save money, but a uniform set is expensive and ordinary clothes must "
                      "still be bought, so family spending only grows.", 2),
            ("rivalry", "As for rivalry, students will compete with phones, shoes and backpacks; a uniform will not "
                        "stop that.", 0),
            ("countries", "Pointing to countries with high results is correlation, not cause: Finland has no "
                          "uniforms and high results.", 5)]),
    "pt": (["O uniforme escolar reduz a competição entre os alunos por causa de roupas caras.",
            "O uniforme torna a escola mais segura: é fácil reconhecer estranhos.",
            "A roupa única ajuda as famílias a economizar dinheiro nas compras.",
            "O uniforme cria nos alunos orgulho da escola e sentimento de pertença.",
            "De manhã não é preciso escolher roupa, e os alunos poupam tempo para estudar.",
            "Muitos países com ótimos resultados na educação têm uniforme escolar."],
           [("dinheiro", "Dizem que as famílias economizam, mas o conjunto do uniforme é caro e a roupa comum "
                         "continua necessária, então os gastos só aumentam.", 2),
            ("competição", "Quanto à competição, os alunos vão competir com celulares, tênis e mochilas; o uniforme "
                           "não impede isso.", 0),
            ("países", "Citar países com ótimos resultados é correlação, não causa: a Finlândia não tem uniforme e "
                       "tem resultados ótimos.", 5)]),
}


MOTIONS = {"zh": "本院支持校服", "ru": "Школьная форма нужна", "ar": "الزي المدرسي ضروري",
           "en": "School uniforms are needed", "pt": "O uniforme escolar é necessário"}


def two_rounds(language: str) -> Debate:
    """Four speeches: the six points, the three rebuttals, then the first three points and two rebuttals again."""
    first, second = REBUTTALS[language]
    rebuttals = [text for _, text, _ in second]
    return Debate.model_validate({
        "id": f"uniforms-{language}", "motion": MOTIONS[language], "format": "1v1",
        "debaters": [{"name": "Ana", "side": "pro"}, {"name": "Ben", "side": "con"}],
        "speeches": [{"speaker": "Ana", "content": "\n\n".join(first)},
                     {"speaker": "Ben", "content": "\n\n".join(rebuttals)},
                     {"speaker": "Ana", "content": "\n\n".join(first[:3])},
                     {"speaker": "Ben", "content": "\n\n".join(rebuttals[:2])}]})
